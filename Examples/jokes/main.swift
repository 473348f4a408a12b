import Foundation
import SeedApps
import SeedTerminal

let content = JokesApp()
let options: AppOptions
do {
    options = try AppOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("jokes: \(error)\n".utf8))
    exit(2)
}
if options.showHelp {
    print(AppOptions.help(app: "jokes", summary: "a live jokes feed with votes (Hearth's seed tutorials 000 and 001)", keys: content.keyHelp + ["o         sign out", "q         quit", "?         the keys"]))
    exit(0)
}
guard Terminal.isInteractive else {
    FileHandle.standardError.write(Data("jokes: run me in a terminal (see --help)\n".utf8))
    exit(2)
}
SeedShell(content: content, options: options).run()
