#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import HearthSupport
import Testing

@testable import HearthCLI

/// Runs `hearth` in-process and captures what it writes.
private func hearth(_ arguments: String...) -> (status: ExitCode, output: String, errorOutput: String) {
    hearth(arguments)
}

private func hearth(_ arguments: [String]) -> (status: ExitCode, output: String, errorOutput: String) {
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

@Test("hearth serve refuses a wrong command line before listening", arguments: [
    ["--bogus"], ["--port", "x"], ["--port", "70000"], ["--port"], ["--emulator=maybe"], ["--tls-cert", "a.pem"],
    ["--trusted-proxies", "proxy.example.com"], ["--hsts", ""], ["--trust-forwarded-for", "true"],
])
func serveRejectsBadArguments(arguments: [String]) {
    let result = hearth(["serve"] + arguments)
    #expect(result.status == .usageError)
    #expect(result.output.isEmpty)
    #expect(result.errorOutput.contains("hearth serve --help"))
}

@Test func serveSettingsPreferFlagsThenEnvironmentThenConfigFile() throws {
    let file = "port = 7000\nhost = 0.0.0.0  # every interface\nproject = from-file\n"
    let settings = try ServeSettings.resolve(
        arguments: ["--port", "7100", "--emulator"], environment: ["HEARTH_PORT": "7050", "HEARTH_PROJECT": "from-env"],
        readFile: { $0 == "hearth.conf" ? file : nil })
    #expect(settings.port == 7100)
    #expect(settings.host == "0.0.0.0")
    #expect(settings.project == "from-env")
    #expect(settings.emulator)
    #expect(settings.defaultNamespace == "from-env-default-rtdb")
    #expect(settings.dataDirectory == "./hearth-data")
}

@Test func proxiesAndHSTSAreTheOperatorsToSet() throws {
    let defaults = try ServeSettings.resolve(arguments: [], environment: [:], readFile: { _ in nil })
    #expect(defaults.trustedProxies.isEmpty)
    #expect(defaults.strictTransportSecurity == "max-age=31536000")
    let set = try ServeSettings.resolve(
        arguments: ["--trusted-proxies", "127.0.0.1, ::1", "--hsts", "off"], environment: [:], readFile: { _ in nil })
    #expect(set.trustedProxies == ["127.0.0.1", "::1"])
    #expect(set.strictTransportSecurity == nil)
    // The old flag trusted the header from anyone: it says what replaced it rather than being ignored.
    #expect(throws: ServeSettings.ParseError.self) {
        try ServeSettings.resolve(arguments: ["--trust-forwarded-for", "true"], environment: [:], readFile: { _ in nil })
    }
    #expect(hearth(["serve", "--trust-forwarded-for", "true"]).errorOutput.contains("--trusted-proxies"))
}

@Test func storageComesFromTheFlagThenTheEnvironmentThenTheConfigFile() throws {
    let file = "storage = postgresql://file@db/hearth\n"
    let fromFile = try ServeSettings.resolve(arguments: [], environment: [:], readFile: { $0 == "hearth.conf" ? file : nil })
    #expect(fromFile.dataStore == .postgres(url: "postgresql://file@db/hearth"))
    let fromEnvironment = try ServeSettings.resolve(
        arguments: [], environment: ["HEARTH_STORAGE": "postgres://env@db/hearth"], readFile: { $0 == "hearth.conf" ? file : nil })
    #expect(fromEnvironment.dataStore == .postgres(url: "postgres://env@db/hearth"))
    let fromFlag = try ServeSettings.resolve(
        arguments: ["--storage=postgresql://flag@db/hearth"], environment: ["HEARTH_STORAGE": "postgres://env@db/hearth"], readFile: { _ in nil })
    #expect(fromFlag.dataStore == .postgres(url: "postgresql://flag@db/hearth"))
    let none = try ServeSettings.resolve(arguments: ["--data", "/srv/h"], environment: [:], readFile: { _ in nil })
    #expect(none.dataStore == .sqlite(directory: "/srv/h"))
}

@Test("hearth serve refuses a --storage that is no PostgreSQL URL, without repeating it", arguments: [
    "mysql://ada:s3cret@db/app", "s3cret", "postgresql://ada:s3cret%zz@db/app", "postgresql://ada:s3cret@[db/app",
])
func serveRejectsOtherStorage(storage: String) {
    let result = hearth("serve", "--storage", storage)
    #expect(result.status == .usageError)
    #expect(result.errorOutput.contains("--storage") && !result.errorOutput.contains("s3cret"), "\(result.errorOutput)")
    if storage.hasPrefix("mysql") { #expect(result.errorOutput.contains("'mysql://'")) }
}

@Test func dataCommandsRefuseAnotherStorageTheSameWay() {
    let result = hearth("export", "demo", "--storage", "sqlite://ada:s3cret@x")
    #expect(result.status == .usageError)
    #expect(result.errorOutput.contains("PostgreSQL URL") && !result.errorOutput.contains("s3cret"))
}

@Test func serveHelpDescribesTheCommand() {
    let result = hearth("serve", "--help")
    #expect(result.status == .success)
    #expect(result.output.contains("Usage: hearth serve"))
    for option in ["--host", "--port", "--data", "--storage", "HEARTH_STORAGE", "--project", "--emulator", "HEARTH_PORT", "--config"] {
        #expect(result.output.contains(option))
    }
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

@Test func importExportAndBackupRoundTrip() throws {
    let directory = "/tmp/hearth-cli-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    _ = mkdir(directory, 0o755)
    let file = directory + "/in.json"
    let json = #"{"users":{"ada":{".priority":1,"name":"Ada"}},"n":[1,2]}"#
    try json.write(toFile: file, atomically: true, encoding: .utf8)
    var output = "", errors = ""
    #expect(HearthCommand.run(["import", "demo", file, "--data", directory], output: &output, errorOutput: &errors) == .success, "\(errors)")
    output = ""
    #expect(HearthCommand.run(["export", "demo", "--data", directory], output: &output, errorOutput: &errors) == .success)
    #expect(output.contains(#"".priority":1"#) && output.contains(#""name":"Ada""#) && output.contains(#""n":{"0":1,"1":2}"#))
    #expect(HearthCommand.run(["backup", "demo", directory + "/copy.sqlite", "--data", directory], output: &output, errorOutput: &errors) == .success)
    var exported = ""
    #expect(HearthCommand.run(["export", "copy", "--data", directory], output: &exported, errorOutput: &errors) == .success)
    #expect(exported == output.components(separatedBy: "Backed up").first!)
}

@Test func exportOfAMissingNamespaceSaysWhatToDo() {
    var output = "", errors = ""
    let status = HearthCommand.run(["export", "nope", "--data", "/tmp/hearth-missing-\(getpid())"], output: &output, errorOutput: &errors)
    #expect(status == .failure)
    #expect(errors.contains("--data"))
}
