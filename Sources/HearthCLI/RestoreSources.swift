import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import HearthCore
import HearthStorage
import HearthTriggers

/// Where `hearth restore` reads a namespace's data and feed and writes what it rebuilt: the running
/// server (as its admin, over REST), or, when none answers, the storage itself (`--data`, `--storage`).
protocol RestoreSource {
    /// The data at `path` now, with priorities.
    func data(_ namespace: String, at path: Path) throws -> Node
    /// Every entry the feed keeps, in order, and the last position retention removed.
    func feed(_ namespace: String) throws -> ([FeedEntry], Int64)
    /// Writes `value` at `path` of `namespace` (empty removes), as one admin write.
    func put(_ namespace: String, at path: Path, _ value: Node) throws
}

extension RestoreCommand {
    /// The running server, as its admin.
    struct Server: RestoreSource {
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
                let message = "could not reach \(url) (\(error.localizedDescription)). Is 'hearth serve' running? Pass its address with --url, or, with the server stopped, its storage with --data DIR or --storage URL."
                // Only a refused connection means no server: a timeout may be a busy one, whose storage
                // must not be written beside it.
                guard (error as? URLError)?.code == .cannotConnectToHost else { throw Failure(message) }
                throw Unreachable(message: message)
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

        /// Every entry the feed keeps, in order, and the last position retention removed. Read from
        /// where retention stopped (asked first: a page after the newest position says it), again from
        /// there if retention goes on meanwhile.
        func feed(_ namespace: String) throws -> ([FeedEntry], Int64) {
            var attempt = 0
            while true {
                let trimmed = try page(namespace, after: Int64.max, limit: 1).trimmedThrough
                do { return try feed(namespace, after: trimmed) } catch let failure as Failure where failure.message.contains(" 410: ") && attempt < 3 {
                    attempt += 1
                }
            }
        }

        private func feed(_ namespace: String, after start: Int64) throws -> ([FeedEntry], Int64) {
            var entries: [FeedEntry] = []
            var after = start
            var trimmed: Int64 = 0
            while true {
                let page = try page(namespace, after: after, limit: 10_000)
                trimmed = page.trimmedThrough
                entries += page.entries
                guard let last = page.entries.last else { return (entries, trimmed) }
                after = last.position
            }
        }

        private func page(_ namespace: String, after: Int64, limit: Int) throws -> (entries: [FeedEntry], trimmedThrough: Int64) {
            let text = try request(
                "GET", "/.feed.json",
                [URLQueryItem(name: "ns", value: namespace), URLQueryItem(name: "after", value: String(after)), URLQueryItem(name: "limit", value: String(limit))])
            return try FeedEntry.page(json: Array(text.utf8))
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

    /// No server answered at the URL (nothing was read or written).
    struct Unreachable: Error {
        let message: String
    }

    /// The storage itself, with the server stopped: the data read from a snapshot, the feed from the
    /// engine, and the result written as one commit with its feed entry (so an in-place restore is in
    /// the history, as through the server).
    struct Offline: RestoreSource {
        let store: DataStore

        func data(_ namespace: String, at path: Path) throws -> Node {
            let engine = try store.openExisting(namespace)
            defer { engine.close() }
            return try engine.load(progress: nil).child(at: path)
        }

        func feed(_ namespace: String) throws -> ([FeedEntry], Int64) {
            let engine = try store.openExisting(namespace)
            defer { engine.close() }
            var entries: [FeedEntry] = []
            var after: Int64 = 0
            while true {
                let page = try FeedPages.read(engine, after: after, limit: 10_000)
                for entry in page.entries {
                    var json: [UInt8] = []
                    entry.appendServed(to: &json)
                    entries.append(try FeedEntry(json: json))
                }
                guard let last = page.entries.last else { return (entries, page.trimmedThrough) }
                after = last.position
            }
        }

        func put(_ namespace: String, at path: Path, _ value: Node) throws {
            // A whole namespace into one that does not exist yet: written as an import (records in one
            // transaction), not as one write whose batch would hold all of it.
            if path.isRoot, (try? store.openExisting(namespace)).map({ engine in engine.close() }) == nil {
                let engine = try store.openCreating(namespace)
                defer { engine.close() }
                try engine.replaceAll(with: value, progress: nil)
                return
            }
            let engine = try store.openCreating(namespace)
            defer { engine.close() }
            let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let note = ChangeFeedNote(time: now, path: path, data: .set(value), authType: .admin, channel: "restore")
            let done = DispatchSemaphore(value: 0)
            final class Box: @unchecked Sendable { var error: (any Error)? }
            let box = Box()
            database.set(path, to: value, now: now, feed: note) { result in
                if case .failure(let error) = result { box.error = error }
                done.signal()
            }
            done.wait()
            if let error = box.error { throw error }
        }
    }
}
