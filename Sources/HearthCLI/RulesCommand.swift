import Foundation
import HearthBolt
import HearthRules

/// `hearth rules <subcommand>`: working with security rules files.
///
/// Each subcommand is one case in ``run(_:output:errorOutput:)`` and one entry in ``usage``; `deploy`
/// lives in RulesDeploy.swift.
enum RulesCommand {
    static let usage = """
        Usage: hearth rules <subcommand>

        Subcommands:
          compile FILE.bolt  Compile Bolt rules to Firebase rules JSON on standard output
                             (errors and warnings go to standard error as FILE:LINE:COLUMN: ...)
          test RULES CASES   Decide each case of CASES.json (reads and writes by users, each
                             expected to be allowed or denied) with RULES (.json or .bolt);
                             prints every failure with the rule that decided it
          deploy NS RULES [--url URL] [--data DIR] [--token TOKEN]
                             Check RULES (.json or .bolt) and make them the rules of namespace NS
                             on the running server (default http://127.0.0.1:9000, with the admin
                             token of DIR, default ./hearth-data; 'owner' for an emulator)

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
        case "test":
            return test(rest, output: &output, errorOutput: &errorOutput)
        case "deploy":
            return RulesDeploy.run(rest, output: &output, errorOutput: &errorOutput)
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

    /// Rules JSON from a `.json` file, or compiled from a `.bolt` one; nil (with the error printed) when
    /// it cannot be read or compiled.
    static func rulesSource<ErrorOutput: TextOutputStream>(_ file: String, errorOutput: inout ErrorOutput) -> String? {
        guard let bytes = FileManager.default.contents(atPath: file) else {
            print("hearth rules: cannot read '\(file)': check that the file exists and is readable.", to: &errorOutput)
            return nil
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard file.hasSuffix(".bolt") else { return text }
        do {
            return try BoltCompiler.compile(source: text)
        } catch {
            print("\(position(file, error.location)) error: \(error.message)", to: &errorOutput)
            return nil
        }
    }

    /// Compiled rules, or nil with the error printed as FILE:LINE:COLUMN.
    static func ruleSet<ErrorOutput: TextOutputStream>(_ file: String, errorOutput: inout ErrorOutput) -> RuleSet? {
        guard let source = rulesSource(file, errorOutput: &errorOutput) else { return nil }
        do { return try RuleSet(source: source) } catch {
            let where_ = file.hasSuffix(".bolt") ? "\(file) (compiled):" : "\(file):"
            print("\(where_)\(error.line):\(error.column): error: \(error.message)", to: &errorOutput)
            return nil
        }
    }

    /// `hearth rules test RULES CASES.json`: exit 0 when every case decides as expected, 1 otherwise.
    static func test<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        guard arguments.count == 2 else {
            print("Usage: hearth rules test RULES CASES.json  (see 'hearth rules --help')", to: &errorOutput)
            return .usageError
        }
        guard let rules = ruleSet(arguments[0], errorOutput: &errorOutput) else { return .failure }
        guard let bytes = FileManager.default.contents(atPath: arguments[1]) else {
            print("hearth rules test: cannot read '\(arguments[1])'.", to: &errorOutput)
            return .failure
        }
        let cases: RulesTestCases
        do { cases = try RulesTestCases(json: String(decoding: bytes, as: UTF8.self)) } catch {
            print("hearth rules test: \(arguments[1]): \(error)", to: &errorOutput)
            return .failure
        }
        let outcomes = cases.run(rules)
        let failures = outcomes.filter { !$0.passed }
        for outcome in failures {
            let testCase = outcome.testCase
            let expected = testCase.expectAllowed ? "allowed" : "denied"
            print("FAIL \(testCase.name): \(testCase.operation.rawValue) \(testCase.path.slashed) expected \(expected), "
                + "\(outcome.decision)", to: &output)
        }
        print("\(outcomes.count - failures.count) of \(outcomes.count) cases passed.", to: &output)
        return failures.isEmpty ? .success : .failure
    }

    /// `FILE:LINE:COLUMN:` (or `FILE:` when the message is about the whole file), the form editors link.
    private static func position(_ file: String, _ location: SourceLocation?) -> String {
        guard let location else { return "\(file):" }
        return "\(file):\(location.line):\(location.column):"
    }
}
