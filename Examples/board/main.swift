import Foundation
import SeedApps
import SeedTerminal

let content = BoardApp()
let options: AppOptions
do {
    options = try AppOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("board: \(error)\n".utf8))
    exit(2)
}
if options.showHelp {
    print(AppOptions.help(app: "board", summary: "a message board and your own posts, working offline too (Hearth's seed tutorials 003 and 004)", keys: content.keyHelp + ["o         sign out", "q         quit", "?         the keys"]))
    exit(0)
}
guard Terminal.isInteractive else {
    FileHandle.standardError.write(Data("board: run me in a terminal (see --help)\n".utf8))
    exit(2)
}
SeedShell(content: content, options: options).run()
