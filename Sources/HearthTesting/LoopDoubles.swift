public import HearthProtocol
import Dispatch
import Synchronization

// Stand-ins for the transport, shared by every suite and fuzzer that drives a server without sockets:
// the test's thread plays the event loop.

/// Runs work at once: the caller's thread is the loop.
public struct ImmediateExecutor: LoopExecutor {
    public init() {}
    public func execute(_ work: @escaping @Sendable () -> Void) { work() }
}

/// Keeps work until the test drains it: the loop's inbox, turned by hand.
public final class QueuedExecutor: LoopExecutor {
    private let work = Mutex<[@Sendable () -> Void]>([])

    public init() {}

    private let queued = DispatchSemaphore(value: 0)

    public func execute(_ item: @escaping @Sendable () -> Void) {
        work.withLock { $0.append(item) }
        queued.signal()
    }

    /// Runs what is queued, first waiting (at most `seconds`) for something to be, when another thread
    /// is to hand it over (a load or a commit off the loop); how many items ran, 0 when none came.
    @discardableResult
    public func drainWhenQueued(seconds: Double = 10) -> Int {
        let deadline = DispatchTime.now() + seconds
        while true {
            let ran = drain()
            if ran > 0 { return ran }
            guard queued.wait(timeout: deadline) == .success else { return 0 }
        }
    }

    /// Runs what is queued now (not what that queues); returns how many items ran.
    @discardableResult
    public func drain() -> Int {
        let items = work.withLock { items in
            defer { items = [] }
            return items
        }
        for item in items { item() }
        return items.count
    }
}

/// Records what a request is answered, or a stream sends. Like the transport, `send` refuses once what
/// is held passes `limit` (the slow-reader cut-off).
public final class RecordingResponder: HTTPResponder, @unchecked Sendable {
    // Used on one thread at a time (the test's, playing the loop).
    public var response: HTTPResponse?
    public var streamed: [UInt8] = []
    public var streamStatus: Int?
    public var finished = false
    public var aborted = false
    public var limit = Int.max
    public var onClose: (() -> Void)?
    public var queuedByteCount: Int { streamed.count }

    private let answered = DispatchSemaphore(value: 0)

    public init(limit: Int = .max) { self.limit = limit }

    public func respond(_ response: HTTPResponse) {
        self.response = response
        answered.signal()
    }

    /// The answer, once `respond` has been called, from any thread (an answer handed back from another
    /// queue, such as Auth's); nil after `seconds` without one.
    public func waitForResponse(seconds: Double) -> HTTPResponse? {
        if let response { return response }
        guard answered.wait(timeout: .now() + seconds) == .success else { return nil }
        answered.signal()  // the next wait sees it too
        return response
    }
    public func startStream(status: Int, headers: [(String, String)]) { streamStatus = status }
    public func send(_ bytes: [UInt8]) -> Bool {
        guard !aborted, streamed.count <= limit else { return false }
        streamed += bytes
        return true
    }
    public func sendFinal(_ bytes: [UInt8]) { streamed += bytes }
    public func finish() { finished = true }
    public func abort() { aborted = true }
    /// What was streamed, as text.
    public var text: String { String(decoding: streamed, as: UTF8.self) }
}

/// Records the messages a realtime session sends; refuses more once `limit` are held.
public final class RecordingSink: RealtimeSink {
    public var frames: [String] = []
    public var closedReason: String?
    public var limit = Int.max

    public init(limit: Int = .max) { self.limit = limit }

    public func sendMessage(_ frames: [[UInt8]]) -> Bool {
        guard self.frames.count < limit else { return false }
        self.frames += frames.map { String(decoding: $0, as: UTF8.self) }
        return true
    }
    public func close(reason: String, immediately: Bool) { closedReason = reason }

    /// The frames so far, forgetting them.
    public func take() -> [String] {
        defer { frames = [] }
        return frames
    }
}
