import HearthCore
import HearthProtocol
import HearthStorage

/// `GET /.feed.json` with `Accept: text/event-stream`: the change feed from a position, then each
/// commit's entries as they are made, as server-sent events (docs/feed.md):
///
///     event: entry
///     data: {"position":8192,"time":…,"type":"set","path":"/jokes/j1",…}
///
/// A position retention has passed gets one `event: resync` (the same message as the 410) and the end
/// of the stream. Loop thread only; pages are read off the loop and handed back to it.
final class ChangeFeedStream {
    let id: UInt64
    let responder: any HTTPResponder
    weak var namespace: Namespace?
    private let executor: any LoopExecutor
    private var follower: ChangeFeedFollower
    private var ended = false

    init(id: UInt64, after position: Int64, responder: any HTTPResponder, namespace: Namespace, executor: any LoopExecutor) {
        self.id = id
        self.responder = responder
        self.namespace = namespace
        self.executor = executor
        follower = ChangeFeedFollower(after: position, pageSize: ServerLimits.feedPageEntriesDefault)
    }

    /// Sends what the feed holds after the position, then follows it.
    func start() {
        if let position = follower.start() { read(after: position) }
    }

    /// A write was committed to the namespace.
    func committed() {
        if let position = follower.committed() { read(after: position) }
    }

    private func read(after position: Int64) {
        guard let engine = namespace?.database.engine else { return }
        let stream = LoopBound(self)
        let executor = executor
        engine.readFeed(after: position, limit: follower.pageSize) { result in
            executor.execute { stream.value.received(result, after: position) }
        }
    }

    private func received(_ result: Result<ChangeFeedPage, StorageError>, after position: Int64) {
        guard !ended else { return }
        switch result {
        case .failure(let error):
            send(event: "error", Array(Node(error.message).json().utf8))
            return finish()
        case .success(let page) where page.needsResync(after: position):
            guard case .failure(let error) = FeedEndpoint.resync(after: position, page) else { return }
            send(event: "resync", Array(Node(error.message).json().utf8))
            return finish()
        case .success(let page):
            for entry in page.entries {
                var data: [UInt8] = []
                entry.appendServed(to: &data)
                guard send(event: "entry", data) else { return }
            }
            if let next = follower.received(count: page.entries.count, last: page.entries.last?.position) {
                read(after: next)
            }
        }
    }

    /// False when the reader was cut off (over its outbound budget: it reconnects from its last position).
    @discardableResult
    private func send(event: String, _ data: [UInt8]) -> Bool {
        var bytes = Array("event: \(event)\ndata: ".utf8)
        bytes += data
        bytes += Array("\n\n".utf8)
        guard responder.send(bytes) else {
            disconnect()
            return false
        }
        return true
    }

    func keepAlive() {
        if !responder.send(SSE.keepAlive) { disconnect() }
    }

    /// Ends the stream abruptly (a reader too slow to keep up).
    func disconnect() {
        end()
        responder.abort()
    }

    /// Ends the stream (the namespace is deleted, the server stops, a resync is needed).
    func finish() {
        end()
        responder.finish()
    }

    private func end() {
        ended = true
        responder.onClose = nil
        namespace?.changeFeedStreams.removeValue(forKey: id)
    }
}
