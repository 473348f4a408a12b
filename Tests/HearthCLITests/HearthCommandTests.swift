import HearthSupport
import Testing

@testable import HearthCLI

/// Runs `hearth` in-process and captures what it writes.
private func hearth(_ arguments: String...) -> (status: ExitCode, output: String, errorOutput: String) {
    var output = "", errorOutput = ""
    let status = HearthCommand.run(arguments, output: &output, errorOutput: &errorOutput)
    return (status, output, errorOutput)
}

@Test("--version prints the version and succeeds", arguments: ["--version", "-v", "version"])
func versionPrintsVersion(flag: String) {
    let result = hearth(flag)
    #expect(result.status == .success)
    #expect(result.output == "hearth \(HearthVersion.string)\n")
    #expect(result.errorOutput.isEmpty)
}

@Test("--help lists every command", arguments: ["--help", "-h", "help"])
func helpListsCommands(flag: String) {
    let result = hearth(flag)
    #expect(result.status == .success)
    #expect(result.output.contains("Usage: hearth <command>"))
    for command in ["serve", "help", "version"] {
        #expect(result.output.contains("  \(command) "))
    }
}

@Test func noArgumentsPrintsHelp() {
    let result = hearth()
    #expect(result.status == .success)
    #expect(result.output == HearthCommand.usage)
}

@Test func serveSaysItIsNotAvailableAndFails() {
    let result = hearth("serve")
    #expect(result.status == .unavailable)
    #expect(result.status.rawValue == 2)
    #expect(result.output.isEmpty)
    #expect(result.errorOutput.contains("not available in this build"))
    #expect(result.errorOutput.contains("Nothing is listening"))
}

@Test func serveHelpDescribesTheCommand() {
    let result = hearth("serve", "--help")
    #expect(result.status == .success)
    #expect(result.output.contains("Usage: hearth serve"))
}

@Test("Unknown commands and options fail with a hint", arguments: ["bogus", "--bogus"])
func unknownCommandFailsWithHint(argument: String) {
    let result = hearth(argument)
    #expect(result.status == .usageError)
    #expect(result.output.isEmpty)
    #expect(result.errorOutput.contains("unknown"))
    #expect(result.errorOutput.contains("'\(argument)'"))
    #expect(result.errorOutput.contains("hearth --help"))
}
