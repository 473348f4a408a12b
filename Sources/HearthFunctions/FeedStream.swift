import Foundation
import HearthSupport
import HearthTriggers

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Follows a namespace's change feed as server-sent events (`GET /.feed.json`, docs/feed.md) from a
/// position, reconnecting after the last entry it received when the connection ends; pauses (ends the
/// connection) while the runner has too much to do, and goes on when told.
final class FeedStream: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // `state` under its lock; callbacks on `queue`
    enum Signal: Sendable {
        /// An entry arrived; false: pause until ``resume()``.
        case entry(FeedEntry)
        /// Retention removed entries after the position before they were read.
        case resync(after: Int64, message: String)
        /// The connection failed or the server refused it (why, and the status when it answered).
        case trouble(String)
    }

    private let server: ServerAddress
    private let token: String
    private let handle: @Sendable (Signal) -> Bool
    private let queue: OperationQueue
    private var session: URLSession!
    private struct State {
        var last: Int64
        var task: URLSessionDataTask?
        var parser = ServerSentEvents()
        var status = 0
        var errorBody: [UInt8] = []
        var paused = false
        var stopped = false
        var failures = 0
        /// The server said the position is past retention; the stream then ends.
        var resync: String?
    }
    private let state: Locked<State>

    init(server: ServerAddress, token: String, after: Int64, handle: @escaping @Sendable (Signal) -> Bool) {
        self.server = server
        self.token = token
        self.handle = handle
        state = Locked(State(last: after))
        queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        super.init()
        session = URLSession(configuration: .default, delegate: self, delegateQueue: queue)
    }

    /// The last entry's position received (where a reconnection reads after).
    var lastReceived: Int64 { state.withLock { $0.last } }

    func start() { connect() }

    /// Goes on after a pause, from the last entry received.
    func resume() {
        let wasPaused = state.withLock { state in
            defer { state.paused = false }
            return state.paused && state.task == nil
        }
        if wasPaused { connect() }
    }

    /// Jumps past entries retention removed (after a resync).
    func skip(to position: Int64) {
        state.withLock { $0.last = max($0.last, position) }
        connect()
    }

    func stop() {
        let task = state.withLock { state in
            state.stopped = true
            return state.task
        }
        task?.cancel()
        session.invalidateAndCancel()
    }

    private func connect() {
        let request: URLRequest? = state.withLock { state in
            guard !state.stopped, state.task == nil,
                let url = URL(string: "\(server.origin)/.feed.json?ns=\(escaped(server.namespace))&after=\(state.last)")
            else { return nil }
            var request = URLRequest(url: url, timeoutInterval: 90)  // keep-alives come every 30 s
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
            return request
        }
        guard let request else { return }
        let task = session.dataTask(with: request)
        let started = state.withLock { state -> Bool in
            guard !state.stopped, state.task == nil else { return false }
            state.task = task
            state.parser = ServerSentEvents()
            state.status = 0
            state.errorBody = []
            return true
        }
        if started { task.resume() }
    }

    private func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    // MARK: URLSession's callbacks (on `queue`, one at a time)

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        state.withLock { $0.status = (response as? HTTPURLResponse)?.statusCode ?? 0 }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        var parser = state.withLock { state -> ServerSentEvents? in
            guard state.task === dataTask else { return nil }
            if state.status != 200 {
                if state.errorBody.count < 2000 { state.errorBody.append(contentsOf: data.prefix(2000)) }
                return nil
            }
            return state.parser
        }
        guard parser != nil else { return }
        var keepGoing = true
        do {
            try parser!.consume(data) { event in
                guard keepGoing else { return }
                keepGoing = try receive(event)
            }
        } catch {
            _ = handle(.trouble("the feed could not be read: \(error)"))
            dataTask.cancel()
            return
        }
        state.withLock { state in
            if state.task === dataTask { state.parser = parser! }
            if !keepGoing { state.paused = true }
        }
        if !keepGoing { dataTask.cancel() }
    }

    /// Handles one event of the stream; false to pause.
    private func receive(_ event: ServerSentEvent) throws -> Bool {
        switch event.name {
        case "entry":
            let entry = try FeedEntry(json: event.data)
            let fresh = state.withLock { state in
                guard entry.position > state.last else { return false }
                state.last = entry.position
                state.failures = 0
                return true
            }
            return fresh ? handle(.entry(entry)) : true
        case "resync":
            let message = (try? JSONSerialization.jsonObject(with: Data(event.data), options: [.fragmentsAllowed])) as? String ?? "resync needed"
            state.withLock { $0.resync = message }
            return true
        case "error":
            _ = handle(.trouble("the server's feed said: \(String(decoding: event.data.prefix(500), as: UTF8.self))"))
            return true
        default:
            return true
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (reconnect, failures, message, resync) = state.withLock { state -> (Bool, Int, String?, (Int64, String)?) in
            guard state.task === task else { return (false, 0, nil, nil) }
            state.task = nil
            let resync = state.resync.map { (state.last, $0) }
            state.resync = nil
            if state.stopped || state.paused || resync != nil { return (false, 0, nil, resync) }
            state.failures += 1
            var message: String?
            if state.status != 200 && state.status != 0 {
                let body = String(decoding: state.errorBody, as: UTF8.self)
                let said = (try? JSONSerialization.jsonObject(with: Data(state.errorBody)) as? [String: Any])?["error"] as? String ?? body
                message = "the server answered \(state.status) to the feed: \(said)"
            } else if let error, (error as NSError).code != NSURLErrorCancelled {
                message = "the feed's connection ended: \(error.localizedDescription)"
            }
            return (true, state.failures, message, nil)
        }
        if let (after, said) = resync {
            _ = handle(.resync(after: after, message: said))
            return
        }
        guard reconnect else { return }
        if let message { _ = handle(.trouble(message)) }
        // The stream ends when the server stops or restarts: back at once the first time, then slower.
        let delay = failures <= 1 ? 0.05 : min(Double(1 << min(failures - 1, 5)) * 0.25, 5)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.connect() }
    }
}
