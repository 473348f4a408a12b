/// How a service is driven by a transport: responders, the handler, the loop's executor, realtime sinks.
/// HearthTransport (libwebsockets) calls these; HearthServer implements them. Neither knows the other.

/// Where a response goes: one HTTP exchange on one connection. Owned by the event loop: call it only
/// there (through ``LoopExecutor`` from other threads).
public protocol HTTPResponder: AnyObject {
    /// Sends a complete response; the connection then serves its next request (keep-alive).
    func respond(_ response: HTTPResponse)
    /// Starts a long-lived response (`Transfer-Encoding: chunked`); send its parts with `send`.
    func startStream(status: Int, headers: [(String, String)])
    /// Queues one part of a stream. Returns false, and queues nothing, when the connection is over its
    /// ``OutboundBudget``: the reader is too slow and must be cut off (``abort()``).
    func send(_ bytes: [UInt8]) -> Bool
    /// Sends `bytes` even over the limit (the last words before ``finish()``).
    func sendFinal(_ bytes: [UInt8])
    /// Ends a stream and closes the connection once what is queued is written.
    func finish()
    /// Drops whatever is queued and closes the connection now: a reader too slow for its stream may
    /// never take what is queued, and must not pin it (``onClose`` is not called).
    func abort()
    /// Called once when the peer goes away or the connection is closed.
    var onClose: (() -> Void)? { get set }
    /// Bytes queued and not yet written.
    var queuedByteCount: Int { get }
}

/// Runs work on the event loop that owns the sockets and the databases.
public protocol LoopExecutor: Sendable {
    func execute(_ work: @escaping @Sendable () -> Void)
    /// Whether the calling thread is the loop's. Stand-ins whose caller plays the loop (HearthTesting)
    /// answer true.
    var isOnLoop: Bool { get }
}

extension LoopExecutor {
    public var isOnLoop: Bool { true }

    /// Debug builds stop here when called off the loop thread: the server's entry points (a request, a
    /// frame, a write, a commit coming back, the tick) say so instead of racing (docs/ARCHITECTURE.md,
    /// "Threads and queues"). Release builds check nothing.
    @inlinable
    public func assertOnLoop(_ entryPoint: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        assert(isOnLoop, "\(entryPoint()) called off the loop thread", file: file, line: line)
    }
}

/// What the transport calls: every method runs on the event-loop thread.
public protocol HTTPHandler: AnyObject {
    /// The loop is running; `executor` hands work to it from other threads.
    func loopStarted(executor: any LoopExecutor)
    func handle(_ request: HTTPRequest, responder: any HTTPResponder)
    /// Called every `tickInterval` (keep-alives, timeouts).
    func tick(nowMilliseconds: Int64)
    /// The loop is about to stop: end streams.
    func loopStopping()
    /// Whether requests for `path` need ``HTTPRequest/remoteAddress`` (a system call per request, so
    /// only asked for where it is used: auth's per-IP limits).
    func needsPeerAddress(path: String) -> Bool
    /// Whether work this handler started elsewhere (writes committing on another thread) will queue more
    /// output within a moment: the transport then holds a large flush briefly so it leaves in the same
    /// sends (see HTTPServerTransport's fan-out hold).
    var hasOutputComing: Bool { get }
    /// The response for a request the transport refuses before it reaches ``handle(_:responder:)`` (a
    /// head too large, a body framed two ways, a bad upgrade), in the handler's own error shape.
    func refusal(status: Int, message: String) -> HTTPResponse
    /// The transport's memory budget, for what the handler holds between requests; given once the loop
    /// has started, before the first request.
    func memoryBudgetAvailable(_ budget: any HeldMemoryBudget)
}

/// The transport's memory budget (under a memory limit, a share of it), lent for what a handler holds
/// between requests: a long-poll session's segments of a message not yet complete. Request bodies and
/// WebSocket messages take from the same budget (``HeldMessageBytes``). Loop thread only.
public protocol HeldMemoryBudget: AnyObject {
    /// Takes `bytes` more; nil when taken, or why not (and nothing taken).
    func hold(_ bytes: Int) -> BudgetRefusal?
    /// Gives back `bytes` taken before.
    func release(_ bytes: Int)
}

extension HTTPHandler {
    public func memoryBudgetAvailable(_ budget: any HeldMemoryBudget) {}
    public func needsPeerAddress(path: String) -> Bool { false }
    public var hasOutputComing: Bool { false }
    public func refusal(status: Int, message: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "text/plain; charset=utf-8")], body: Array((message + "\n").utf8))
    }
}

// MARK: Realtime (WebSocket) sessions

/// Where a realtime session's frames go: one upgraded WebSocket. Loop thread only.
public protocol RealtimeSink: AnyObject {
    /// Queues one message as the frames it was split into (one frame unless ``splitsLargeMessages``).
    /// Returns false, and queues nothing, when the connection is over its ``OutboundBudget``: the client
    /// is too slow and the session closes it. A message is queued whole or not at all.
    func sendMessage(_ frames: [[UInt8]]) -> Bool
    /// Closes the socket (after what is queued unless `immediately`), telling the client `reason`.
    func close(reason: String, immediately: Bool)
    /// Whether messages over 16,384 bytes go out as count-prefixed frames (WebSockets, §1.8); the
    /// long-poll transport sends whole messages.
    var splitsLargeMessages: Bool { get }
}

extension RealtimeSink {
    public var splitsLargeMessages: Bool { true }
}

/// One realtime session as the transport sees it. Loop thread only.
public protocol RealtimeSessionHandle: AnyObject {
    /// One complete WebSocket text message.
    func receive(frame: [UInt8])
    /// Bytes the session holds of a message whose frames are still arriving (the protocol's count
    /// frame and segments): the transport holds its memory budget for them (docs/reliability.md).
    var reassemblingByteCount: Int { get }
    /// The socket is gone (peer closed, timed out, or closed by the server): run onDisconnect.
    func closed()
}

/// What the transport calls for a WebSocket upgrade (`GET` with `Upgrade: websocket`).
public protocol RealtimeHandler: AnyObject {
    /// The one path WebSocket upgrades are served at (`/.ws`); others are answered 404.
    var webSocketPath: String { get }
    /// Starts a session on an upgraded socket: the handshake is sent at once.
    func openRealtime(_ request: HTTPRequest, sink: any RealtimeSink) -> any RealtimeSessionHandle
}
