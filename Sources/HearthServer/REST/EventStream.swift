import HearthCore
import HearthProtocol

/// One `Accept: text/event-stream` response (docs/protocol.md §6.7): one location, optionally a query,
/// subscribed to its namespace's ``FanOut`` while open.
final class EventStream: FanOutTarget {
    let id: UInt64
    let path: Path
    let exportFormat: Bool
    /// Who opened it: re-checked when the rules change and when its credential expires.
    let caller: Caller
    /// The query of a query stream (`orderBy` with limits or ranges), nil for the whole location.
    let params: QueryParams?
    /// A query stream's window as first sent.
    let initialWindow: Node
    let responder: any HTTPResponder
    weak var namespace: Namespace?

    init(
        id: UInt64, path: Path, exportFormat: Bool, caller: Caller, params: QueryParams? = nil, initialWindow: Node = .empty,
        responder: any HTTPResponder, namespace: Namespace
    ) {
        self.id = id
        self.path = path
        self.exportFormat = exportFormat
        self.caller = caller
        self.params = params
        self.initialWindow = initialWindow
        self.responder = responder
        self.namespace = namespace
    }

    var key: FanOut.Key { FanOut.Key(subscriber: id, location: path, tag: nil) }

    func deliver(_ messages: [[UInt8]]) -> Bool {
        for message in messages where !responder.send(message) { return false }
        return true
    }

    /// Ends the stream with `auth_revoked`: its credential expired (§6.7).
    func revokeAuth() {
        detach()
        responder.sendFinal(SSE.authRevoked)
        responder.finish()
    }

    /// Ends the stream at once, dropping what is queued: its reader fell more than the outbound budget
    /// behind (ServerLimits.outboundBytesPerConnectionMax), and a `cancel` queued behind that backlog
    /// would never be read (ARCHITECTURE.md, "Slow readers").
    func disconnectSlowReader() {
        detach()
        responder.abort()
    }

    /// Ends the stream with `cancel`, as Firebase does when it stops serving one.
    func cancel() {
        detach()
        responder.sendFinal(SSE.cancel)
        responder.finish()
    }

    /// Ends the stream quietly as the server stops.
    func finish() {
        detach()
        responder.finish()
    }

    private func detach() {
        responder.onClose = nil
        namespace?.removeStream(self)
    }
}
