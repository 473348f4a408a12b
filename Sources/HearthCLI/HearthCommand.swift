import Foundation
import HearthSupport

/// The `hearth` command line: parses arguments, runs one command and returns its exit status.
///
/// The executable only forwards `CommandLine.arguments` and exits with the returned status, so every
/// command can be tested in-process by passing string buffers as the output streams:
///
/// ```swift
/// var output = "", errorOutput = ""
/// let status = HearthCommand.run(["--version"], output: &output, errorOutput: &errorOutput)
/// // status == .success, output == "hearth 0.1.0-dev\n"
/// ```
public enum HearthCommand {
    /// Runs `hearth` with the process arguments (program name first) against standard output and error.
    public static func main(_ arguments: [String]) -> Int32 {
        liveProgress = true
        var output = FileDescriptorOutputStream.standardOutput
        var errorOutput = FileDescriptorOutputStream.standardError
        let status = run(Array(arguments.dropFirst()), output: &output, errorOutput: &errorOutput)
        #if DEBUG
            // Every command stops or joins the threads it started before it returns: one still running
            // while the process exits can be inside a library whose exit handlers are tearing it down.
            // Debug builds (the tests') check it on every run.
            let left = LeftoverThreads.waitingBriefly()
            if !left.isEmpty {
                print("hearth: internal error: threads still running as the command returns: \(left.joined(separator: ", ")).", to: &errorOutput)
                return ExitCode.internalError.rawValue
            }
        #endif
        return status.rawValue
    }

    /// Runs `hearth` with `arguments` (program name excluded), writing normal output to `output` and
    /// diagnostics to `errorOutput`.
    public static func run<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        guard let command = arguments.first else {
            print(usage, terminator: "", to: &output)
            return .success
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "-h", "--help", "help":
            print(usage, terminator: "", to: &output)
            return .success
        case "-v", "--version", "version":
            print("hearth \(HearthVersion.string)", to: &output)
            return .success
        case "serve":
            return serve(rest, output: &output, errorOutput: &errorOutput)
        case "export":
            return DataCommands.export(rest, output: &output, errorOutput: &errorOutput)
        case "import":
            return DataCommands.importJSON(rest, output: &output, errorOutput: &errorOutput)
        case "backup":
            return DataCommands.backup(rest, output: &output, errorOutput: &errorOutput)
        case "rules":
            return RulesCommand.run(rest, output: &output, errorOutput: &errorOutput)
        case "users":
            return UsersCommand.run(rest, output: &output, errorOutput: &errorOutput)
        case "console":
            return ConsoleCommand.run(rest, output: &output, errorOutput: &errorOutput)
        case "feed":
            return FeedCommand.run(rest, output: &output, errorOutput: &errorOutput)
        case "hooks":
            return HooksCommand.run(rest, output: &output, errorOutput: &errorOutput)
        case "restore":
            return RestoreCommand.run(rest, output: &output, errorOutput: &errorOutput)
        case "backups":
            return BackupsCommand.run(rest, output: &output, errorOutput: &errorOutput)
        default:
            let kind = command.hasPrefix("-") ? "option" : "command"
            print("hearth: unknown \(kind) '\(command)'.", to: &errorOutput)
            print("Run 'hearth --help' to see the commands this build has.", to: &errorOutput)
            return .usageError
        }
    }

    /// True when running as the `hearth` program: long commands then print progress to standard error.
    nonisolated(unsafe) static var liveProgress = false

    /// `hearth serve`: parses its settings, then serves until SIGINT or SIGTERM.
    static func serve<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
            print(serveUsage, terminator: "", to: &output)
            return .success
        }
        let settings: ServeSettings
        do {
            settings = try ServeSettings.resolve(
                arguments: arguments, environment: ProcessInfo.processInfo.environment,
                readFile: { path in FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } })
        } catch {
            guard case .usage(let message) = error else { return .usageError }
            print("hearth serve: \(message).", to: &errorOutput)
            print("Run 'hearth serve --help' for the options.", to: &errorOutput)
            return .usageError
        }
        return runServer(settings, output: &output, errorOutput: &errorOutput)
    }

    static let usage = """
        hearth \(HearthVersion.string): a self-hosted server for Firebase Realtime Database and Auth clients.

        Usage: hearth <command>

        Commands:
          serve        Serve the database on http://localhost:9000 (see 'hearth serve --help')
          export NS    Write namespace NS as Firebase export JSON to standard output
          import NS F  Replace namespace NS with the export JSON in file F (atomically)
          backup NS F  Copy namespace NS's database to file F while hearth runs (export JSON from PostgreSQL)
          users ...    Accounts: list, add, disable, enable, delete, export, import (see 'hearth users --help')
                       (data commands take --data DIR, default ./hearth-data, or --storage postgresql://…)
          rules compile F  Compile the Bolt rules in file F to rules JSON on standard output
          rules test R C   Check rules R (.json or .bolt) against the cases in C
          rules deploy NS R  Make rules R the rules of namespace NS on the running server
                       (rules deploy takes --url URL, --data DIR or --token TOKEN)
          feed NS      Print namespace NS's change feed from the running server, one JSON entry per line
                       (takes --after POSITION, --limit N, --url URL, --data DIR or --token TOKEN)
          hooks ...    Webhooks on the running server: deploy NS FILE, get, status, log, dead, redeliver
                       (see 'hearth hooks --help')
          restore NS   Namespace NS as it was at a time (--at) or before a feed position (--before-position),
                       rebuilt from the change feed (and the backups) into NS-restored-<time>
                       (or --into NEW_NS, or --in-place; see 'hearth restore --help')
          backups list The scheduled backups (hearth serve --backup-every) and what each can restore to;
                       backups verify NS checks them again
          console link Print a one-time link that signs a browser in to the running server's console
                       (see 'hearth console --help')
          help         Show this help (also -h, --help)
          version      Show the version (also -v, --version)

        Exit status: 0 on success, 1 when a command failed (the message says why and what to do),
        2 when a command is not available in this build, 64 when the command line is wrong.

        """

    static var serveUsage: String { ServeSettings.usage }
}

/// How a `hearth` command ended, as the process exit status.
///
/// The values follow the shell convention (0 is success) and BSD `sysexits.h` for usage errors.
public struct ExitCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The command did what was asked.
    public static let success = ExitCode(rawValue: 0)
    /// The command failed; its message on standard error says why and what to do.
    public static let failure = ExitCode(rawValue: 1)
    /// The command exists but is not available in this build (for example `serve`, until the server lands).
    public static let unavailable = ExitCode(rawValue: 2)
    /// The command line was wrong: `EX_USAGE` in `sysexits.h`.
    public static let usageError = ExitCode(rawValue: 64)
    /// Hearth itself is wrong (a debug build's own checks failed): `EX_SOFTWARE` in `sysexits.h`.
    public static let internalError = ExitCode(rawValue: 70)

    public var description: String { "exit code \(rawValue)" }
}
