import Foundation

/// What a seed app is started with: the database to use and where to find what it needs to deploy the
/// apps' rules there.
public struct AppOptions: Equatable, Sendable {
    /// `http://localhost:9000?ns=seed` unless `--url` says otherwise (`make run`'s server).
    public var databaseURL = "http://localhost:9000?ns=seed"
    /// The server's data directory, for its admin token (to deploy the rules): `--data`, default ./hearth-data.
    public var dataDirectory = "hearth-data"
    /// The admin token itself (`--token`); else the data directory's, else `owner` (an emulator).
    public var adminToken: String?
    /// The Bolt rules (`--rules`); else Examples/rules/seed-apps.bolt found from here or from the sources.
    public var rulesFile: String?
    public var showHelp = false

    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    public init() {}

    public static func parse(_ arguments: [String]) throws(UsageError) -> AppOptions {
        var options = AppOptions()
        var index = 0
        func value(_ flag: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count, !arguments[index].hasPrefix("--") else { throw UsageError(description: "\(flag) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--help", "-h": options.showHelp = true
            case "--url":
                let url = try value(argument)
                guard let components = URLComponents(string: url), components.host != nil,
                    ["http", "https"].contains(components.scheme?.lowercased() ?? "")
                else { throw UsageError(description: "--url \(url) is not a database URL such as http://localhost:9000?ns=seed") }
                options.databaseURL = url
            case "--data": options.dataDirectory = try value(argument)
            case "--token": options.adminToken = try value(argument)
            case "--rules": options.rulesFile = try value(argument)
            default: throw UsageError(description: "unknown option \(argument) (see --help)")
            }
            index += 1
        }
        return options
    }

    /// The `--help` text of an app.
    public static func help(app: String, summary: String, keys: [String]) -> String {
        """
        \(app): \(summary)

        Usage: \(app) [--url URL] [--data DIR] [--token TOKEN] [--rules FILE]

          --url URL      the database (default http://localhost:9000?ns=seed, the server of 'make run')
          --data DIR     the server's data directory, whose admin token deploys the apps' rules when the
                         namespace has none (default ./hearth-data)
          --token TOKEN  the admin token itself ('owner' for a server started with --emulator)
          --rules FILE   the Bolt rules to deploy (default Examples/rules/seed-apps.bolt)

        The signed-in session is kept under $HEARTH_CLIENT_CACHE_DIR (default ~/.local/share/hearth), so the
        next start skips the login screen.

        Keys:
        \(keys.map { "  " + $0 }.joined(separator: "\n"))
        """
    }
}
