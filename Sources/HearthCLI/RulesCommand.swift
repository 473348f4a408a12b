import Foundation
import HearthBolt

/// `hearth rules <subcommand>`: working with security rules files.
///
/// Today the only subcommand is `compile`; each new one (`deploy`, `test`, ...) is one more case in
/// ``run(_:output:errorOutput:)`` and one more line in ``usage``.
enum RulesCommand {
    static let usage = """
        Usage: hearth rules <subcommand>

        Subcommands:
          compile FILE.bolt  Compile Bolt rules to Firebase rules JSON on standard output
                             (errors and warnings go to standard error as FILE:LINE:COLUMN: ...)

        """

    static func run<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        guard let subcommand = arguments.first else {
            print(usage, terminator: "", to: &errorOutput)
            return .usageError
        }
        let rest = Array(arguments.dropFirst())
        switch subcommand {
        case "-h", "--help", "help":
            print(usage, terminator: "", to: &output)
            return .success
        case "compile":
            return compile(rest, output: &output, errorOutput: &errorOutput)
        default:
            print("hearth rules: unknown subcommand '\(subcommand)'.", to: &errorOutput)
            print("Run 'hearth rules --help' to see the subcommands.", to: &errorOutput)
            return .usageError
        }
    }

    /// `hearth rules compile FILE.bolt`: the rules JSON on standard output, exit 1 on a compile error.
    static func compile<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        if arguments == ["-h"] || arguments == ["--help"] {
            print(usage, terminator: "", to: &output)
            return .success
        }
        guard arguments.count == 1, let file = arguments.first, !file.hasPrefix("-") else {
            print("Usage: hearth rules compile FILE.bolt  (writes rules JSON to standard output)", to: &errorOutput)
            return .usageError
        }
        guard let bytes = FileManager.default.contents(atPath: file) else {
            print("hearth rules compile: cannot read '\(file)': check that the file exists and is readable.", to: &errorOutput)
            return .failure
        }
        do {
            let result = try BoltCompiler.compileWithWarnings(source: String(decoding: bytes, as: UTF8.self))
            for warning in result.warnings {
                print("\(position(file, warning.location)) warning: \(warning.message)", to: &errorOutput)
            }
            output.write(result.json)
            return .success
        } catch {
            print("\(position(file, error.location)) error: \(error.message)", to: &errorOutput)
            return .failure
        }
    }

    /// `FILE:LINE:COLUMN:` (or `FILE:` when the message is about the whole file), the form editors link.
    private static func position(_ file: String, _ location: SourceLocation?) -> String {
        guard let location else { return "\(file):" }
        return "\(file):\(location.line):\(location.column):"
    }
}
