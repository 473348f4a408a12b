import Foundation
import SeedApps
import SeedTerminal

let content = SocialApp()
let options: AppOptions
do {
    options = try AppOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("social: \(error)\n".utf8))
    exit(2)
}
if options.showHelp {
    print(AppOptions.help(app: "social", summary: "profiles, a username login and followers (Hearth's seed tutorial 002)", keys: content.keyHelp + ["o         sign out", "q         quit", "?         the keys"]))
    exit(0)
}
guard Terminal.isInteractive else {
    FileHandle.standardError.write(Data("social: run me in a terminal (see --help)\n".utf8))
    exit(2)
}
SeedShell(content: content, options: options).run()
