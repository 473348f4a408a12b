import Foundation
import Synchronization
import Testing

@testable import HearthBenchmarks

@Test("The generated document is valid JSON with every section of the app")
func documentIsValidJSONWithEverySection() throws {
    let document = DocumentGenerator(seed: 7).generate(byteCount: 200_000)
    let root = try #require(try JSONSerialization.jsonObject(with: Data(document)) as? [String: Any])
    #expect(Set(root.keys) == ["users", "usernames", "jokes", "followers", "messages"])
    for (name, section) in root {
        let children = try #require(section as? [String: Any], "\(name) is an object")
        #expect(!children.isEmpty, "\(name) has entries")
    }
}

@Test("The document fills the requested size without going over", arguments: [4096, 65_536, 1_000_000])
func documentFillsRequestedSize(byteCount: Int) {
    let document = DocumentGenerator(seed: 1).generate(byteCount: byteCount)
    #expect(document.count <= byteCount)
    // Within one message (at most ~420 bytes) of the target, so a benchmark processes what it says.
    #expect(document.count >= byteCount - 512)
}

@Test func sameSeedGivesSameBytesAndOtherSeedsDiffer() {
    let first = DocumentGenerator(seed: 42).generate(byteCount: 50_000)
    #expect(first == DocumentGenerator(seed: 42).generate(byteCount: 50_000))
    #expect(first != DocumentGenerator(seed: 43).generate(byteCount: 50_000))
}

@Test("Keys have Firebase's shapes: 28-character uids, 20-character push ids in time order")
func keysHaveFirebaseShapes() throws {
    let document = DocumentGenerator(seed: 3).generate(byteCount: 300_000)
    let root = try #require(try JSONSerialization.jsonObject(with: Data(document)) as? [String: Any])
    let users = try #require(root["users"] as? [String: [String: Any]])
    #expect(users.keys.allSatisfy { $0.count == 28 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } })
    let jokes = try #require(root["jokes"] as? [String: [String: Any]])
    #expect(jokes.keys.allSatisfy { $0.utf8.count == 20 })
    // Push ids sort by creation time, as the Firebase SDKs' ids do.
    let byKey = jokes.sorted { $0.key < $1.key }.map { $0.value["createdAt"] as? Int64 ?? 0 }
    #expect(byKey == byKey.sorted())
    for joke in jokes.values {
        let voters = try #require(joke["voters"] as? [String: Bool])
        #expect(voters.count <= 40)
        #expect(joke["votes"] as? Int == voters.count)
        #expect(voters.keys.allSatisfy { users[$0] != nil }, "voters are users")
    }
    let usernames = try #require(root["usernames"] as? [String: String])
    #expect(usernames.count == users.count)
    // Firebase keys cannot contain '.', '$', '#', '[', ']' or '/'.
    let forbidden = Set(".$#[]/")
    for section in root.values {
        for key in (section as? [String: Any])?.keys ?? [:].keys { #expect(!key.contains(where: forbidden.contains)) }
    }
}

@Test func resultPrintsOneJSONLineWithKeysInOrder() throws {
    let result = BenchmarkResult(
        scenario: "core.parse", metric: "parse throughput", value: 200, unit: "MB/s",
        reference: "Foundation.JSONSerialization", referenceValue: 50)
    #expect(
        result.jsonLine
            == #"{"scenario":"core.parse","metric":"parse throughput","value":200,"unit":"MB/s","#
            + #""reference":"Foundation.JSONSerialization","referenceValue":50,"ratio":4}"#)
    let alone = BenchmarkResult(scenario: "reference.x", metric: "m", value: 1.23456, unit: "MB/s")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(alone.jsonLine.utf8)) as? [String: Any])
    #expect(object["value"] as? Double == 1.235)
    #expect(object["ratio"] is NSNull)
}

@Test func residentMemoryIsReadOnLinux() throws {
    #if os(Linux)
        let resident = try #require(ProcessMemory.residentBytes())
        let peak = try #require(ProcessMemory.peakResidentBytes())
        #expect(resident > 1_000_000)
        #expect(peak >= resident / 2)
    #endif
}

@Test("Scenarios that compare two builds are skipped, and say so, without --baseline; a --baseline that is not a program is refused")
func buildComparisonsNeedABaseline() {
    let ran = Mutex(false)
    let comparison = Scenario(name: "ab.test", summary: "compares") { _ in
        ran.withLock { $0 = true }
        return BenchmarkResult(scenario: "ab.test", metric: "m", value: 1, unit: "u")
    }
    #expect(BenchmarkRunner.main(arguments: ["ab"], scenarios: [comparison]) == 0)
    #expect(!ran.withLock { $0 })
    #expect(BenchmarkRunner.main(arguments: ["--baseline", "/nonexistent/hearth", "ab"], scenarios: [comparison]) == 64)
    #expect(BenchmarkRunner.main(arguments: ["--baseline", "/bin/true", "ab"], scenarios: [comparison]) == 0)
    #expect(ran.withLock { $0 })
}
