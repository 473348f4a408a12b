import Foundation
import HearthFuzzing
import Testing

/// `Tests/Fuzz/corpus/<target>/` (seeds, and inputs the fuzzers found interesting) and
/// `Tests/Fuzz/regressions/<target>/` (inputs that once crashed or broke a property): every file
/// runs through its target on every `swift test`, so a fixed crash stays fixed without the fuzzer.
private let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Fuzz")

private func inputs(of target: String) -> [URL] {
    ["corpus", "regressions"].flatMap { kind in
        let directory = fuzzDirectory.appendingPathComponent(kind).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
    }
}

@Test("Every saved input runs through its fuzz target", arguments: FuzzTarget.all.map(\.name))
func savedInputsRunCleanly(target name: String) throws {
    let target = try #require(FuzzTarget.named(name))
    let files = inputs(of: name)
    #expect(!files.isEmpty, "no seed corpus in Tests/Fuzz/corpus/\(name)")
    for file in files {
        target.run(Array(try Data(contentsOf: file)))
    }
}

@Test func everyCorpusDirectoryHasATarget() throws {
    let names = try FileManager.default.contentsOfDirectory(atPath: fuzzDirectory.appendingPathComponent("corpus").path)
    for name in names where !name.hasPrefix(".") {
        #expect(FuzzTarget.named(name) != nil, "Tests/Fuzz/corpus/\(name) has no fuzz target")
    }
}
