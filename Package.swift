// swift-tools-version:6.0
// Hearth: a self-hosted Firebase Realtime Database and Auth server.
// No package dependencies: only the toolchain and Debian's C libraries (see DEVELOPERS.md).
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The tree engine's release build skips dynamic exclusivity checks: its B-tree nodes are classes
/// mutated through `inout` while uniquely held, and the runtime check cost ~10% of a write
/// (measured with callgrind, docs/BENCHMARKS.md). Debug builds and tests keep the checks.
let engine: [SwiftSetting] = strict + [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "Hearth",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hearth", targets: ["hearth"]),
        .executable(name: "hearth-bench", targets: ["HearthBenchmarks"]),
        .library(name: "HearthCore", targets: ["HearthCore"]),
    ],
    targets: [
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
        .target(name: "HearthSupport", swiftSettings: strict),
        .target(name: "HearthCore", dependencies: ["HearthSupport"], swiftSettings: engine),
        .target(name: "HearthCLI", dependencies: ["HearthCore", "HearthSupport"], swiftSettings: strict),
        .executableTarget(name: "hearth", dependencies: ["HearthCLI"], swiftSettings: strict),
        .executableTarget(
            name: "HearthBenchmarks", dependencies: ["HearthCore", "HearthSupport", "CMalloc"], swiftSettings: strict),
        .testTarget(name: "HearthCoreTests", dependencies: ["HearthCore"], swiftSettings: strict),
        .testTarget(name: "HearthCLITests", dependencies: ["HearthCLI", "HearthSupport"], swiftSettings: strict),
        .testTarget(name: "HearthBenchmarksTests", dependencies: ["HearthBenchmarks"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
