import Foundation
import HearthServer
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The HTTP requests the command line sends a running `hearth serve` as its admin (`rules deploy`,
/// `console link`): one at a time, waited for.
enum AdminRequest {
    /// The admin credential for a server whose data directory is `dataDirectory`: `token` when given,
    /// else the directory's admin-token file, else the emulator's `owner`.
    static func credential(token: String?, dataDirectory: String) -> String {
        token
            ?? (try? String(contentsOfFile: AdminToken.file(in: dataDirectory), encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            ?? "owner"
    }

    /// Sends `request` and waits for the status and body (or why there is none).
    static func send(_ request: URLRequest) -> Result<(Int, String), any Error> {
        final class Box: @unchecked Sendable { var result: Result<(Int, String), any Error>? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        // A session of its own, invalidated afterwards, so that its threads are done with it when the
        // command returns.
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        session.dataTask(with: request) { data, response, error in
            if let error {
                box.result = .failure(error)
            } else {
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                box.result = .success((status, String(decoding: data ?? Data(), as: UTF8.self)))
            }
            done.signal()
        }.resume()
        done.wait()
        return box.result ?? .failure(URLError(.unknown))
    }
}
