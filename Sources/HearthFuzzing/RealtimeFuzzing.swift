import HearthCore
import HearthProtocol
import HearthServer
import HearthTesting

/// The realtime protocol: frames as a client sends them over a WebSocket (envelopes, count-prefixed
/// segments, every request action, queries, onDisconnect), through a session to its close.
///
/// Input: frames separated by newlines.
enum RealtimeFuzzing {
    static let target = FuzzTarget(name: "realtime", input: "WebSocket text frames, one per line", run: run)

    static func run(_ bytes: [UInt8]) {
        let (server, pending) = makeFuzzServer()
        let sink = RecordingSink(limit: 10_000)
        let session = server.openRealtime(
            HTTPRequest(method: .get, path: "/.ws", queryItems: [("v", "5"), ("ns", "fuzz")], headers: ["host": "fuzz"]),
            sink: sink)
        for frame in bytes.split(separator: 10, omittingEmptySubsequences: false) {
            session.receive(frame: Array(frame))
            pending.drain()
            if sink.closedReason != nil { break }
        }
        session.closed()
        pending.drain()
        server.close()
    }
}
