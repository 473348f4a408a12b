// swift-tools-version:6.0
// The fuzzers: one executable, `hearth-fuzz TARGET [libFuzzer options] [corpus…]`, over HearthFuzzing's
// targets. A package of its own because it builds only with `-sanitize=fuzzer,address` (libFuzzer provides
// the driver it calls); `make fuzz` builds and runs it. See docs/fuzzing.md.
import PackageDescription

let package = Package(
    name: "HearthFuzz",
    platforms: [.macOS(.v15)],
    products: [.executable(name: "hearth-fuzz", targets: ["HearthFuzz"])],
    dependencies: [.package(name: "Hearth", path: "..")],
    targets: [
        .executableTarget(
            name: "HearthFuzz", dependencies: [.product(name: "HearthFuzzing", package: "Hearth")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ],
    swiftLanguageModes: [.v6]
)
