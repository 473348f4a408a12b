import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The calls a functions process makes to its server's `/.settings/functions/NAME…` (docs/functions.md):
/// registering its patterns, saving its cursor, parking an event.
struct ConsumerEndpoint: Sendable {
    var server: ServerAddress
    var name: String
    var token: String

    struct Failure: Error, CustomStringConvertible, @unchecked Sendable {  // `answer` is read-only JSON
        /// The HTTP status, 0 when the server did not answer.
        var status: Int
        var description: String
        /// The server's JSON answer, when it gave one.
        var answer: [String: Any] = [:]
        var trimmedThrough: NSNumber?
    }

    /// Registers the patterns (and, with `auth`, user functions); where to read the feed after, and the
    /// auth feed (nil: never said).
    func register(paths: [String], auth: Bool) async throws -> (after: Int64, authAfter: Int64?) {
        let answer = try await call("PUT", "functions/\(name)", ["paths": paths, "auth": auth])
        guard let after = (answer["after"] as? NSNumber)?.int64Value else { throw Failure(status: 200, description: "the server's answer has no \"after\"") }
        return (after, (answer["authAfter"] as? NSNumber)?.int64Value)
    }

    func saveCursor(_ after: Int64) async throws {
        _ = try await call("PUT", "functions/\(name)/cursor", ["after": after])
    }

    func saveAuthCursor(_ authAfter: Int64) async throws {
        _ = try await call("PUT", "functions/\(name)/cursor", ["authAfter": authAfter])
    }

    /// A page of the auth feed (`GET /hearth/v1/auth/events`): its events as JSON objects, and the
    /// newest position. A position retention passed throws a ``Failure`` with status 410 and `trimmedThrough`.
    func authEvents(after: Int64, limit: Int) async throws -> (events: [[String: Any]], head: Int64) {
        do {
            let answer = try await request("GET", "/hearth/v1/auth/events?after=\(after)&limit=\(limit)", body: nil)
            return (answer["events"] as? [[String: Any]] ?? [], (answer["head"] as? NSNumber)?.int64Value ?? 0)
        } catch var failure as Failure where failure.status == 410 {
            failure.trimmedThrough = failure.answer["trimmedThrough"] as? NSNumber
            throw failure
        }
    }

    func park(function: String, id: String, position: Int64, attempts: Int, error: String, event: [String: Any]) async throws {
        _ = try await call(
            "POST", "functions/\(name)/parked",
            ["function": function, "id": id, "position": position, "attempts": attempts, "error": error, "event": event])
    }

    /// The last position retention removed from the feed: where to go on after a resync.
    func trimmedThrough() async throws -> Int64 {
        let answer = try await request("GET", "/.feed.json?ns=\(escaped(server.namespace))&after=\(Int64.max)&limit=1", body: nil)
        guard let trimmed = (answer["trimmedThrough"] as? NSNumber)?.int64Value else { throw Failure(status: 200, description: "the feed's answer has no trimmedThrough") }
        return trimmed
    }

    private func call(_ method: String, _ endpoint: String, _ body: [String: Any]) async throws -> [String: Any] {
        try await request(method, "/.settings/\(endpoint).json?ns=\(escaped(server.namespace))", body: try JSONSerialization.data(withJSONObject: body))
    }

    private func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    private func request(_ method: String, _ pathAndQuery: String, body: Data?) async throws -> [String: Any] {
        guard let url = URL(string: server.origin + pathAndQuery) else { throw Failure(status: 0, description: "\(server.origin + pathAndQuery) is not a URL") }
        var request = URLRequest(url: url, timeoutInterval: 30)
        request.httpMethod = method
        request.httpBody = body
        request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        // URLSession's async data(for:) needs macOS 12; the completion form is everywhere.
        let (data, status): (Data, Int) = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: Failure(status: 0, description: "\(server.origin) did not answer: \(error.localizedDescription)"))
                } else {
                    continuation.resume(returning: (data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0))
                }
            }.resume()
        }
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard (200...299).contains(status) else {
            let message = object["error"] as? String ?? String(decoding: data.prefix(300), as: UTF8.self)
            throw Failure(status: status, description: "\(method) \(pathAndQuery) answered \(status): \(message)", answer: object)
        }
        return object
    }
}
