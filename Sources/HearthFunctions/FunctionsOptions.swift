public import Foundation

/// Where a functions process runs against and as whom: from its command line (`--url`, `--data`,
/// `--token`, `--name`) or the environment (`HEARTH_DATABASE_URL`, `HEARTH_ADMIN_TOKEN`).
public struct FunctionsOptions: Sendable, Equatable {
    /// The database: `http://localhost:9000?ns=demo` (the namespace in `ns`, as the SDK's database URLs).
    public var databaseURL = "http://localhost:9000?ns=demo"
    /// The server's admin token; nil: the data directory's `admin-token`, else `owner` (an emulator).
    public var adminToken: String?
    /// The server's data directory, for its admin token (`--data`, default ./hearth-data).
    public var dataDirectory = "hearth-data"
    /// The name the server keeps this process's cursor under; nil: the executable's name.
    public var name: String?
    /// How many handlers run at once (for different locations; one location's run one at a time).
    public var concurrency = 64
    public var showHelp = false

    public init() {}

    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The options of `arguments` (the command line without the executable), over the environment's.
    public static func parse(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) -> FunctionsOptions {
        var options = FunctionsOptions()
        if let url = environment["HEARTH_DATABASE_URL"], !url.isEmpty { options.databaseURL = url }
        if let token = environment["HEARTH_ADMIN_TOKEN"], !token.isEmpty { options.adminToken = token }
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
            case "--url": options.databaseURL = try value(argument)
            case "--data": options.dataDirectory = try value(argument)
            case "--token": options.adminToken = try value(argument)
            case "--name": options.name = try value(argument)
            case "--concurrency":
                let text = try value(argument)
                guard let number = Int(text), (1...10_000).contains(number) else {
                    throw UsageError(description: "--concurrency is a whole number from 1 to 10000, not '\(text.prefix(20))'")
                }
                options.concurrency = number
            default: throw UsageError(description: "unknown option \(argument.prefix(80)) (see --help)")
            }
            index += 1
        }
        guard let server = ServerAddress(databaseURL: options.databaseURL) else {
            throw UsageError(description: "--url \(options.databaseURL.prefix(200)) is not a database URL such as http://localhost:9000?ns=demo")
        }
        _ = server
        return options
    }

    /// The admin token to use: the option's, else the data directory's file, else `owner`.
    var resolvedToken: String {
        if let adminToken { return adminToken }
        let file = dataDirectory + "/admin-token"
        if let text = try? String(contentsOfFile: file, encoding: .utf8) {
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !token.isEmpty { return token }
        }
        return "owner"
    }

    static let help = """
        Usage: EXECUTABLE [--url URL] [--data DIR] [--token TOKEN] [--name NAME] [--concurrency N]

          --url URL          the database (default http://localhost:9000?ns=demo; or HEARTH_DATABASE_URL)
          --data DIR         the server's data directory, whose admin-token file is used (default ./hearth-data)
          --token TOKEN      the admin token itself (or HEARTH_ADMIN_TOKEN; 'owner' for --emulator servers)
          --name NAME        the name the server keeps this process's place in the feed under
                             (default: the executable's name)
          --concurrency N    handlers running at once, for different locations (default 64)

        Runs the functions until SIGTERM or SIGINT; see docs/functions.md.
        """
}

/// The server and namespace of a database URL.
struct ServerAddress: Sendable, Equatable {
    /// `http://host:port`.
    var origin: String
    var namespace: String

    init(origin: String, namespace: String) {
        self.origin = origin
        self.namespace = namespace
    }

    init?(databaseURL: String) {
        guard let components = URLComponents(string: databaseURL), let host = components.host, !host.isEmpty,
            let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme)
        else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        origin = "\(scheme)://\(host.contains(":") ? "[\(host)]" : host)\(port)"
        if let ns = components.queryItems?.first(where: { $0.name == "ns" })?.value, !ns.isEmpty {
            namespace = ns
        } else if let first = host.split(separator: ".").first, host.contains(".") {
            namespace = String(first)
        } else {
            return nil
        }
    }
}
