import Foundation
import HearthFunctions
import SeedFunctions

// The seed apps' functions: vote totals and the top-10 board for jokes, follower counts for social.
// Against 'make run' by default, as the apps are (docs/examples.md).
let functions = Functions()
JokesFunctions.register(on: functions)
SocialFunctions.register(on: functions)

var arguments = Array(CommandLine.arguments.dropFirst())
if !arguments.contains("--url") && ProcessInfo.processInfo.environment["HEARTH_DATABASE_URL"] == nil {
    arguments = ["--url", "http://localhost:9000?ns=seed"] + arguments
}
functions.run(arguments: arguments)
