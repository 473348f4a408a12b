import Foundation
import SeedTerminal

/// What each app's `main.swift` does: read the options, answer `--help`, insist on a terminal, and run.
public enum SeedMain {
    public static func run(_ content: any SeedContent, summary: String) -> Never {
        let name = content.name
        let options: AppOptions
        do {
            options = try AppOptions.parse(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
            exit(2)
        }
        if options.showHelp {
            print(AppOptions.help(app: name, summary: summary, keys: content.keyHelp + ["o         sign out", "q         quit", "?         the keys"]))
            exit(0)
        }
        guard Terminal.isInteractive else {
            FileHandle.standardError.write(Data("\(name): run me in a terminal (see --help)\n".utf8))
            exit(2)
        }
        SeedShell(content: content, options: options).run()
        exit(0)
    }
}
