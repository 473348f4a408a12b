import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import HearthCore
import HearthTriggers

/// `hearth restore NS (--at TIME | --before-position P) [--path /p] [--into NEW_NS | --in-place] [--url URL]
/// [--data DIR] [--token TOKEN]`: namespace NS (or one location of it) as it was at an earlier moment,
/// through the running server (docs/operations.md, "Point-in-time restore"): reads the data now, then the
/// change feed, undoes every write after the moment (``FeedRestore``) and writes the result as an admin:
/// into another namespace by default (`NS-restored-<time>`), or in place, where the restore is itself a
/// write in the history and can be undone the same way.
enum RestoreCommand {
    static let usage = "Usage: hearth restore NS (--at 2026-12-05T10:02:00.123Z | --before-position P) [--path /location] [--into NEW_NS | --in-place] [--url URL] [--data DIR] [--token TOKEN]"

    static func run<Output: TextOutputStream, ErrorOutput: TextOutputStream>(
        _ arguments: [String], output: inout Output, errorOutput: inout ErrorOutput
    ) -> ExitCode {
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
            print(usage, to: &output)
            print("Rebuilds the data as it was from the change feed (as far back as its retention) and writes it into NEW_NS (default NS-restored-<time>) or, with --in-place, over NS (docs/operations.md).", to: &output)
            return .success
        }
        guard let parsed = CommandArguments.parse(
            arguments, valueOptions: ["--at", "--before-position", "--path", "--into", "--url", "--data", "--token"], command: "restore",
            errorOutput: &errorOutput)
        else { return .usageError }
        let options = parsed.options
        let inPlace = parsed.positional.contains("--in-place")
        let positional = parsed.positional.filter { $0 != "--in-place" }
        guard positional.count == 1 else {
            print(usage, to: &errorOutput)
            return .usageError
        }
        let namespace = positional[0]
        let moment: FeedRestore.Moment
        switch (options["--at"], options["--before-position"]) {
        case (let text?, nil):
            guard let time = parseTime(text) else {
                print("hearth restore: --at takes a time such as 2026-12-05T10:02:00.123Z (UTC, or with an offset), not '\(text.prefix(40))'.", to: &errorOutput)
                return .usageError
            }
            moment = .time(time)
        case (nil, let text?):
            guard let position = Int64(text), position > 0 else {
                print("hearth restore: --before-position takes a feed position (a whole number, as /.history.json shows), not '\(text.prefix(20))'.", to: &errorOutput)
                return .usageError
            }
            moment = .beforePosition(position)
        default:
            print("hearth restore: give the moment with --at TIME or --before-position P (one of them).", to: &errorOutput)
            return .usageError
        }
        if inPlace && options["--into"] != nil {
            print("hearth restore: --into and --in-place say different things; give one.", to: &errorOutput)
            return .usageError
        }
        let pathText = options["--path"] ?? "/"
        guard pathText.hasPrefix("/") else {
            print("hearth restore: --path is a location such as /jokes.", to: &errorOutput)
            return .usageError
        }
        let path = Path(pathText)
        let target = inPlace ? namespace : options["--into"] ?? defaultTarget(namespace, moment)
        let server = Server(
            url: options["--url"] ?? "http://127.0.0.1:9000",
            credential: AdminRequest.credential(token: options["--token"], dataDirectory: options["--data"] ?? "hearth-data"))

        do {
            // The data first, then the feed: every write the data holds is in the feed read after it.
            let now = try server.data(namespace, at: path)
            let (entries, trimmedThrough) = try server.feed(namespace)
            if let refusal = coverage(entries, trimmedThrough: trimmedThrough, moment: moment) { throw Failure(refusal) }
            let first = FeedRestore.firstUndone(entries, at: moment)
            var root = Node.empty
            _ = root.set(path, to: now)
            let restored: Node
            do { restored = try FeedRestore.undo(entries[(first ?? entries.endIndex)...], on: root).child(at: path) } catch {
                throw Failure("cannot restore: \(error.description)")
            }
            try server.put(target, at: path, restored)
            let undone = entries.count - (first ?? entries.count)
            print("Restored \(path.slashed) of \(namespace) as it was \(describe(moment)) into \(target)\(inPlace ? " (in place: this restore is itself in the history)" : ""): \(undone) later write\(undone == 1 ? "" : "s") undone.", to: &output)
            return .success
        } catch let failure as Failure {
            print("hearth restore: \(failure.message)", to: &errorOutput)
            return .failure
        } catch {
            print("hearth restore: \(error)", to: &errorOutput)
            return .failure
        }
    }

    struct Failure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// Why the retained feed cannot reach back to `moment`, if it cannot.
    static func coverage(_ entries: [FeedEntry], trimmedThrough: Int64, moment: FeedRestore.Moment) -> String? {
        guard trimmedThrough > 0 else { return nil }  // the feed holds every write the namespace ever had
        switch moment {
        case .beforePosition(let position) where position <= trimmedThrough:
            return "position \(position) is older than the change feed keeps (retention removed everything through \(trimmedThrough))."
        case .time(let time) where entries.first.map({ $0.time > time }) ?? true:
            let since = entries.first.map { " (it keeps writes from \(format($0.time)) on)" } ?? ""
            return "\(format(time)) is older than the change feed keeps\(since): retention removed what it would take."
        default:
            return nil
        }
    }

    static func describe(_ moment: FeedRestore.Moment) -> String {
        switch moment {
        case .time(let time): "at \(format(time))"
        case .beforePosition(let position): "just before position \(position)"
        }
    }

    static func defaultTarget(_ namespace: String, _ moment: FeedRestore.Moment) -> String {
        switch moment {
        case .time(let time):
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyyMMdd-HHmmss"
            return "\(namespace)-restored-\(formatter.string(from: Date(timeIntervalSince1970: Double(time) / 1000)))"
        case .beforePosition(let position): return "\(namespace)-restored-\(position)"
        }
    }

    /// Milliseconds since the epoch of an ISO 8601 time, with or without fractional seconds.
    static func parseTime(_ text: String) -> Int64? {
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        guard let date = withFraction.date(from: text) ?? plain.date(from: text) else { return nil }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func format(_ time: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(time) / 1000))
    }

    /// The running server, as its admin.
    struct Server {
        let url: String
        let credential: String

        func request(_ method: String, _ path: String, _ query: [URLQueryItem], body: Data? = nil) throws -> String {
            guard var components = URLComponents(string: (url.hasSuffix("/") ? String(url.dropLast()) : url) + path) else {
                throw Failure("'\(url)' is not a URL such as http://127.0.0.1:9000.")
            }
            components.queryItems = query
            guard let target = components.url else { throw Failure("'\(url)' is not a URL such as http://127.0.0.1:9000.") }
            var request = URLRequest(url: target)
            request.httpMethod = method
            request.httpBody = body
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
            request.timeoutInterval = 300
            switch AdminRequest.send(request) {
            case .failure(let error):
                throw Failure("could not reach \(url) (\(error.localizedDescription)). Is 'hearth serve' running? Pass its address with --url.")
            case .success(let (status, text)):
                guard status == 200 || status == 204 else {
                    let message = (try? Node(json: text))?.child(at: Path("error")).stringValue ?? String(text.prefix(300))
                    throw Failure("the server said \(status): \(message)\(status == 401 ? " (pass the admin token with --token or the server's --data directory with --data)" : "")")
                }
                return text
            }
        }

        /// The data at `path` now, with priorities.
        func data(_ namespace: String, at path: Path) throws -> Node {
            let text = try request("GET", restPath(path), [URLQueryItem(name: "ns", value: namespace), URLQueryItem(name: "format", value: "export")])
            do { return try Node(json: text) } catch { throw Failure("the data of \(namespace) did not parse: \(error)") }
        }

        /// Every entry the feed keeps, in order, and the last position retention removed.
        func feed(_ namespace: String) throws -> ([FeedEntry], Int64) {
            var entries: [FeedEntry] = []
            var after: Int64 = 0
            var trimmed: Int64 = 0
            while true {
                let text = try request(
                    "GET", "/.feed.json",
                    [URLQueryItem(name: "ns", value: namespace), URLQueryItem(name: "after", value: String(after)), URLQueryItem(name: "limit", value: "10000")])
                let page = try FeedEntry.page(json: Array(text.utf8))
                trimmed = page.trimmedThrough
                entries += page.entries
                guard let last = page.entries.last else { return (entries, trimmed) }
                after = last.position
            }
        }

        /// Writes `value` at `path` of `namespace` (null removes).
        func put(_ namespace: String, at path: Path, _ value: Node) throws {
            _ = try request(
                "PUT", restPath(path), [URLQueryItem(name: "ns", value: namespace), URLQueryItem(name: "print", value: "silent")],
                body: Data(value.json(.export).utf8))
        }

        private func restPath(_ path: Path) -> String {
            "/" + path.keys.map { $0.string.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#%"))) ?? $0.string }
                .joined(separator: "/") + ".json"
        }
    }
}
