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

    struct Failure: Error, CustomStringConvertible {
        /// The HTTP status, 0 when the server did not answer.
        var status: Int
        var description: String
    }

    /// Registers the patterns; where to read the feed after.
    func register(paths: [String]) async throws -> Int64 {
        let answer = try await call("PUT", "functions/\(name)", ["paths": paths])
        guard let after = (answer["after"] as? NSNumber)?.int64Value else { throw Failure(status: 200, description: "the server's answer has no \"after\"") }
        return after
    }

    func saveCursor(_ after: Int64) async throws {
        _ = try await call("PUT", "functions/\(name)/cursor", ["after": after])
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
            throw Failure(status: status, description: "\(method) \(pathAndQuery) answered \(status): \(message)")
        }
        return object
    }
}
