import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import HearthCore

/// `hearth feed NS [--after POSITION] [--limit N] [--url URL] [--data DIR] [--token TOKEN]`: prints a page
/// of namespace NS's change feed from the running server (`GET /.feed.json`, docs/feed.md), one entry per
/// line as JSON (JSON Lines, for `jq` and scripts), and on standard error the position to pass as
/// `--after` next.
enum FeedCommand {
    static let usage = "Usage: hearth feed NS [--after POSITION] [--limit N] [--url URL] [--data DIR] [--token TOKEN]"

    static func run<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
            print(usage, to: &output)
            print("Prints the entries one per line as JSON, and the position to read after next on standard error (docs/feed.md).", to: &output)
            return .success
        }
        guard let parsed = CommandArguments.parse(arguments, valueOptions: ["--after", "--limit", "--url", "--data", "--token"], command: "feed", errorOutput: &errorOutput) else {
            return .usageError
        }
        let (positional, options) = (parsed.positional, parsed.options)
        guard positional.count == 1 else {
            print(usage, to: &errorOutput)
            return .usageError
        }
        for name in ["--after", "--limit"] {
            if let value = options[name], UInt64(value) == nil {
                print("hearth feed: \(name) must be a whole number, not '\(value.prefix(20))'.", to: &errorOutput)
                return .usageError
            }
        }
        let url = options["--url"] ?? "http://127.0.0.1:9000"
        let credential = AdminRequest.credential(token: options["--token"], dataDirectory: options["--data"] ?? "hearth-data")
        guard var components = URLComponents(string: url.hasSuffix("/") ? url + ".feed.json" : url + "/.feed.json") else {
            print("hearth feed: '\(url)' is not a URL such as http://127.0.0.1:9000.", to: &errorOutput)
            return .usageError
        }
        components.queryItems = [URLQueryItem(name: "ns", value: positional[0])]
            + ["after", "limit"].compactMap { name in options["--" + name].map { URLQueryItem(name: name, value: $0) } }
        guard let target = components.url else { return .usageError }
        var request = URLRequest(url: target)
        request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 30
        switch AdminRequest.send(request) {
        case .failure(let error):
            print("hearth feed: could not reach \(url) (\(error.localizedDescription)). Is 'hearth serve' running? Pass its address with --url.", to: &errorOutput)
            return .failure
        case .success(let (status, body)):
            guard status == 200 else {
                let message = (try? Node(json: body))?.child(at: Path("error")).stringValue ?? body
                print("hearth feed: the server said \(status): \(message)", to: &errorOutput)
                if status == 401 { print("Pass the admin token with --token or the server's --data directory with --data.", to: &errorOutput) }
                return .failure
            }
            return printPage(body, output: &output, errorOutput: &errorOutput)
        }
    }

    /// Each entry of the page on a line of its own, as the server sent it; the next position on standard error.
    private static func printPage<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ body: String, output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
              let entries = object["entries"] as? [Any], let next = object["next"] as? NSNumber
        else {
            print("hearth feed: the server's answer is not a feed page: \(body.prefix(200))", to: &errorOutput)
            return .failure
        }
        for entry in entries {
            guard let line = try? JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys, .withoutEscapingSlashes]) else { continue }
            print(String(decoding: line, as: UTF8.self), to: &output)
        }
        print("\(entries.count) entr\(entries.count == 1 ? "y" : "ies"); next: hearth feed … --after \(next.int64Value)", to: &errorOutput)
        return .success
    }
}
