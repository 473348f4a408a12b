#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import Testing

@testable import HearthCLI

/// Runs `hearth rules ...` in-process on a Bolt file holding `source`.
private func compile(_ source: String, name: String = "rules.bolt") throws -> (status: ExitCode, output: String, errors: String) {
    let directory = "/tmp/hearth-rules-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let file = directory + "/" + name
    try source.write(toFile: file, atomically: true, encoding: .utf8)
    var output = "", errors = ""
    let status = HearthCommand.run(["rules", "compile", file], output: &output, errorOutput: &errors)
    return (status, output, errors.replacingOccurrences(of: directory + "/", with: ""))
}

@Suite struct RulesCommandTests {
    @Test func compilePrintsRulesJSON() throws {
        let result = try compile("path /posts/{id} { read() { auth != null } }")
        #expect(result.status == .success)
        #expect(result.errors.isEmpty)
        #expect(result.output == """
            {
              "rules": {
                "posts": {
                  "$id": {
                    ".read": "auth != null"
                  }
                }
              }
            }

            """)
    }

    @Test func compileErrorNamesFileLineAndColumnAndFails() throws {
        let result = try compile("path /x {\n  write() { isOwner() }\n}")
        #expect(result.status == .failure)
        #expect(result.output.isEmpty)
        #expect(result.errors == "rules.bolt:2:13: error: Undefined function: isOwner\n")
    }

    @Test func syntaxErrorFails() throws {
        let result = try compile("path /x/ is String;")
        #expect(result.status == .failure)
        #expect(result.errors.hasPrefix("rules.bolt:1:8: error: Paths may not end in a slash"))
    }

    @Test func warningsGoToStandardErrorAndCompilationSucceeds() throws {
        let result = try compile("path /x { read() { true }; }")
        #expect(result.status == .success)
        #expect(result.errors.hasPrefix("rules.bolt:1:26: warning: Extra separator"))
        #expect(result.output.contains("\".read\": \"true\""))
    }

    @Test func missingFileFailsWithAHint() {
        var output = "", errors = ""
        let status = HearthCommand.run(["rules", "compile", "/nonexistent/x.bolt"], output: &output, errorOutput: &errors)
        #expect(status == .failure)
        #expect(errors.contains("cannot read '/nonexistent/x.bolt'"))
    }

    @Test("Wrong command lines are usage errors", arguments: [["rules"], ["rules", "bogus"], ["rules", "compile"], ["rules", "compile", "a", "b"]])
    func wrongCommandLinesAreUsageErrors(arguments: [String]) {
        var output = "", errors = ""
        #expect(HearthCommand.run(arguments, output: &output, errorOutput: &errors) == .usageError)
        #expect(output.isEmpty)
        #expect(!errors.isEmpty)
    }

    @Test func helpListsCompile() {
        var output = "", errors = ""
        #expect(HearthCommand.run(["rules", "--help"], output: &output, errorOutput: &errors) == .success)
        #expect(output.contains("compile FILE.bolt"))
        var topLevel = ""
        _ = HearthCommand.run(["--help"], output: &topLevel, errorOutput: &errors)
        #expect(topLevel.contains("rules compile"))
    }
}
