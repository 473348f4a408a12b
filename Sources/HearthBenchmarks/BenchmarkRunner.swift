import Foundation

/// Parses `hearth-bench`'s command line, selects scenarios and runs them one after another.
enum BenchmarkRunner {
    static let usage = """
        Usage: hearth-bench [options] [scenario-or-prefix ...]

        Runs each selected scenario: one warm-up, then N measured runs, printing every run's time and,
        as the scenario's last line, one JSON object with its result. With no name, runs every scenario.
        A name selects the scenarios that start with it: 'core' runs every core.* scenario.

        Options:
          --runs N              measured runs per scenario (default \(BenchmarkConfiguration.defaultMeasuredRunCount))
          --document-bytes N    size of the generated document (default \(DocumentGenerator.defaultByteCount))
          --seed N              seed of the generated document (default \(DocumentGenerator.defaultSeed))
          --baseline PATH       another build's hearth binary, for the ab.* scenarios, which alternate
                                their rounds between HEARTH_BINARY (this build's) and it in one
                                invocation; without it they are skipped
          --list                list the scenarios and exit
          --write-document PATH write the generated document to PATH and exit (to feed other tools)
          -h, --help            show this help

        """

    /// Runs the command line and returns the process exit status.
    static func main(arguments: [String], scenarios: [Scenario]) -> Int32 {
        var configuration = BenchmarkConfiguration()
        var filters: [String] = []
        var documentPath: String?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "-h", "--help":
                print(usage, terminator: "")
                return 0
            case "--list":
                for scenario in scenarios { print("\(scenario.name)\t\(scenario.summary)") }
                return 0
            case "--baseline":
                guard let path = remaining.popFirst() else { return usageError("--baseline needs the path of a hearth binary") }
                guard FileManager.default.isExecutableFile(atPath: path) else { return usageError("--baseline: no executable at \(path)") }
                configuration.baselineBinary = path
            case "--write-document":
                guard let path = remaining.popFirst() else { return usageError("--write-document needs a path") }
                documentPath = path
            case "--runs", "--document-bytes", "--seed":
                guard let text = remaining.popFirst(), let number = UInt64(text), number > 0 else {
                    return usageError("\(argument) needs a positive whole number")
                }
                switch argument {
                case "--runs": configuration.measuredRunCount = Int(number)
                case "--document-bytes": configuration.documentByteCount = Int(number)
                default: configuration.seed = number
                }
            default:
                if argument.hasPrefix("-") { return usageError("unknown option '\(argument)'") }
                filters.append(argument)
            }
        }

        if let documentPath {
            let document = DocumentGenerator(seed: configuration.seed).generate(byteCount: configuration.documentByteCount)
            do {
                try Data(document).write(to: URL(fileURLWithPath: documentPath))
            } catch {
                printError("hearth-bench: cannot write \(documentPath): \(error)")
                return 1
            }
            print("wrote \(document.count) bytes to \(documentPath)")
            return 0
        }

        let selected = scenarios.filter { scenario in
            filters.isEmpty || filters.contains { scenario.name.hasPrefix($0) }
        }
        guard !selected.isEmpty else {
            let names = scenarios.map(\.name).joined(separator: ", ")
            return usageError("no scenario matches \(filters.joined(separator: " ")); this build has: \(names)")
        }

        warnIfDebugBuild()
        let context = BenchmarkContext(configuration: configuration)
        var failed = false
        for scenario in selected {
            print("== \(scenario.name): \(scenario.summary)")
            if scenario.comparesBuilds && configuration.baselineBinary == nil {
                print("   skipped: it compares two builds of hearth; give the other one with --baseline PATH")
                continue
            }
            do {
                let result = try scenario.run(context)
                print(result.jsonLine)
            } catch {
                failed = true
                printError("hearth-bench: \(scenario.name) failed: \(error)")
            }
        }
        warnIfDebugBuild()
        return failed ? 1 : 0
    }

    private static func usageError(_ message: String) -> Int32 {
        printError("hearth-bench: \(message)\nRun 'hearth-bench --help' for usage.")
        return 64  // EX_USAGE in sysexits.h
    }

    /// Debug numbers are often ten times slower and mean nothing; say so where nobody can miss it.
    private static func warnIfDebugBuild() {
        #if DEBUG
            printError(
                """
                *********************************************************************************
                * WARNING: hearth-bench was built in DEBUG mode. These numbers are meaningless. *
                * Build and run it with: make bench  (swift build -c release)                   *
                *********************************************************************************
                """)
        #endif
    }
}

/// Writes `message` and a newline to standard error, away from the results on standard output.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
