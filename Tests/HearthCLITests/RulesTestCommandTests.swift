import Foundation
import Testing

@testable import HearthCLI

/// The package root, found from this file's place in Tests/HearthCLITests.
private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
private let seedRules = root.appendingPathComponent("Examples/rules/seed-apps.bolt").path
private let seedCases = root.appendingPathComponent("Tests/Fixtures/rules/seed-apps.cases.json").path

private func rules(_ arguments: [String]) -> (status: ExitCode, output: String, errors: String) {
    var output = "", errors = ""
    let status = HearthCommand.run(["rules"] + arguments, output: &output, errorOutput: &errors)
    return (status, output, errors)
}

@Suite struct RulesTestCommandTests {
    @Test func theSeedAppRulesPassEveryCase() {
        let result = rules(["test", seedRules, seedCases])
        #expect(result.status == .success, "\(result.output)\(result.errors)")
        #expect(result.output.hasSuffix("60 of 60 cases passed.\n"))
    }

    @Test func aRuleThatAllowsTooMuchFailsItsCasesAndNamesTheDecidingRule() throws {
        // The seed rules with profile writes opened to every signed-in user.
        let loosened = try String(contentsOfFile: seedRules, encoding: .utf8)
            .replacingOccurrences(of: "path /users/{uid} is Profile {\n  write() { isUser(uid) }", with: "path /users/{uid} is Profile {\n  write() { signedIn() }")
        let file = NSTemporaryDirectory() + "hearth-loosened-\(UUID().uuidString).bolt"
        try loosened.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = rules(["test", file, seedCases])
        #expect(result.status == .failure)
        #expect(result.output.contains("FAIL nobody writes another's profile: write /users/ada/displayName expected denied, allowed: .write at /users/$uid"))
    }

    @Test func badCaseFilesSayWhatIsWrong() throws {
        let file = NSTemporaryDirectory() + "hearth-cases-\(UUID().uuidString).json"
        try #"{"cases": [{"name": "x", "op": "delete", "path": "/a", "expect": "allow"}]}"#.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = rules(["test", seedRules, file])
        #expect(result.status == .failure)
        #expect(result.errors.contains(#"x: "op" must be "read", "write" or "update""#))
    }

    @Test func deployReportsAServerThatIsNotThere() {
        let result = rules(["deploy", "demo", seedRules, "--url", "http://127.0.0.1:1"])
        #expect(result.status == .failure)
        #expect(result.errors.contains("Is 'hearth serve' running?"))
    }
}
