import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `hearth console link [--url URL] [--data DIR] [--token TOKEN]`: asks the running server for a fresh
/// one-time console sign-in link and prints it (docs/console.md, "Signing in"). Only whoever can read the
/// admin token (the owner of the data directory's `admin-token` file) gets one; `hearth serve` prints
/// the link itself only to a terminal, never into a log.
enum ConsoleCommand {
    static let usage = """
        Usage: hearth console link [--url URL] [--data DIR] [--token TOKEN]

          link    print a one-time link that signs a browser in to the console of the server at URL
                  (default http://127.0.0.1:9000), good once within a day; the previous link stops working.
                  Sent with the admin token from DIR/admin-token (default ./hearth-data), or TOKEN
                  ('owner' for a server in emulator mode).

        """

    static func run<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        if arguments.contains("-h") || arguments.contains("--help") {
            print(usage, terminator: "", to: &output)
            return .success
        }
        guard arguments.first == "link" else {
            print(usage, terminator: "", to: &errorOutput)
            return .usageError
        }
        var url = "http://127.0.0.1:9000"
        var dataDirectory = DataCommands.defaultDataDirectory
        var token: String?
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            guard ["--url", "--data", "--token"].contains(argument), index + 1 < arguments.count else {
                print("hearth console link: \(index + 1 < arguments.count ? "unknown option '\(argument)'" : "\(argument) needs a value").", to: &errorOutput)
                print(usage, terminator: "", to: &errorOutput)
                return .usageError
            }
            let value = arguments[index + 1]
            switch argument {
            case "--url": url = value
            case "--data": dataDirectory = value
            default: token = value
            }
            index += 2
        }
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        guard let target = URL(string: base + "/console/api/signin-link"), target.scheme == "http" || target.scheme == "https" else {
            print("hearth console link: '\(url)' is not a URL such as http://127.0.0.1:9000.", to: &errorOutput)
            return .usageError
        }
        var request = URLRequest(url: target)
        request.httpMethod = "POST"
        request.setValue("Bearer \(AdminRequest.credential(token: token, dataDirectory: dataDirectory))", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 30
        switch AdminRequest.send(request) {
        case .failure(let error):
            print("hearth console link: could not reach \(url) (\(error.localizedDescription)). Is 'hearth serve' running? "
                + "Pass its address with --url.", to: &errorOutput)
            return .failure
        case .success(let (status, body)):
            guard status == 200,
                let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                let path = json["path"] as? String
            else {
                print("hearth console link: the server refused (\(status)): \(body)", to: &errorOutput)
                if status == 401 {
                    print("Run this as the owner of the server's data directory (--data DIR), or pass the admin token with --token.", to: &errorOutput)
                }
                return .failure
            }
            print(base + path, to: &output)
            return .success
        }
    }
}
