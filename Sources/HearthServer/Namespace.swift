import HearthCore
import HearthRules
import HearthStorage
import HearthProtocol

/// One database: its durable tree, its SSE streams and its stored rules. Loop thread only.
final class Namespace {
    let name: String
    let database: DurableDatabase
    /// Open SSE streams by id.
    var streams: [UInt64: EventStream] = [:]
    /// Open realtime (WebSocket) sessions by id.
    var realtimeSessions: [UInt64: RealtimeSession] = [:]
    /// Their handshake session ids (`s`), for a reconnect's `ls`.
    var realtimeSessionIDs: [String: UInt64] = [:]
    /// Where those sessions listen: a write is delivered to the sessions it can reach.
    let listenerIndex = ListenerIndex<RealtimeSession>()
    /// The security rules every read and write of a non-admin caller is decided by; `source` is the text
    /// as uploaded (`PUT /.settings/rules.json`), comments included. Replace with ``replaceRules(_:now:)``.
    var rules: RuleSet
    /// False while `rules` are the mode's default (nothing deployed).
    var rulesDeployed: Bool

    init(name: String, database: DurableDatabase, rules: RuleSet, rulesDeployed: Bool) {
        self.name = name
        self.database = database
        self.rules = rules
        self.rulesDeployed = rulesDeployed
    }

    /// A committed write, described as the client sent it, for SSE events (§6.7).
    enum Write {
        case set(Path)
        case update(Path, [Path])

        /// The locations the write replaces (a `.priority` write replaces its node); a merge with no
        /// keys, the location it was sent to.
        var locations: [Path] {
            func normalized(_ path: Path) -> Path { path.last == .priorityKey ? (path.parent ?? path) : path }
            switch self {
            case .set(let path): return [normalized(path)]
            case .update(let path, let keys):
                return keys.isEmpty ? [path] : keys.map { normalized(path.appending(path: $0)) }
            }
        }

        /// Whether the write may change what is at `location` or below it.
        func touches(_ location: Path) -> Bool {
            switch self {
            case .set(let path): return path.overlaps(location)
            case .update(let path, let keys): return keys.contains { path.appending(path: $0).overlaps(location) }
            }
        }
    }

    /// Sends one event per stream the write touches: `put` or `patch` at the stream-relative path, or a
    /// `put` at `/` of the stream's new value when the write was above it. A stream whose buffer is full
    /// is cut off (``EventStream/disconnectSlowReader()``, STYLE §3.9).
    func broadcast(_ write: Write, root: Node) {
        guard !streams.isEmpty else { return }
        // Streams on one location with one format get the same bytes: encode once per write.
        var encoded: [String: [UInt8]] = [:]
        var cutOff: [EventStream] = []
        for stream in streams.values {
            if let params = stream.params {
                // A query stream: its window, sent again whole when the write changed it.
                guard write.touches(stream.path) else { continue }
                let window = QueryWindow.node(of: root.child(at: stream.path), params: params)
                if window == stream.window { continue }
                stream.window = window
                let event = SSE.event("put", path: .root, data: window, format: stream.exportFormat ? .export : .rest)
                if !stream.responder.send(event) { cutOff.append(stream) }
                continue
            }
            let cacheKey = (stream.exportFormat ? "e" : "r") + stream.path.description
            let event: [UInt8]
            if let cached = encoded[cacheKey] {
                event = cached
            } else {
                guard let made = Self.event(for: write, at: stream.path, root: root, exportFormat: stream.exportFormat)
                else { encoded[cacheKey] = []; continue }
                encoded[cacheKey] = made
                event = made
            }
            if event.isEmpty { continue }
            if !stream.responder.send(event) { cutOff.append(stream) }
        }
        for stream in cutOff { stream.disconnectSlowReader() }
    }

    static func event(for write: Write, at location: Path, root: Node, exportFormat: Bool) -> [UInt8]? {
        let format: JSONFormat = exportFormat ? .export : .rest
        switch write {
        case .set(let path):
            if let relative = path.relative(to: location) {
                return SSE.event("put", path: relative, data: root.child(at: path), format: format)
            }
            if location.relative(to: path) != nil {
                return SSE.event("put", path: .root, data: root.child(at: location), format: format)
            }
            return nil
        case .update(let path, let keys):
            if let relative = path.relative(to: location) {
                var data: [UInt8] = [UInt8(ascii: "{")]
                for (index, key) in keys.enumerated() {
                    if index > 0 { data.append(UInt8(ascii: ",")) }
                    Node(key.description).appendJSON(to: &data)
                    data.append(UInt8(ascii: ":"))
                    root.child(at: path.appending(path: key)).appendJSON(to: &data, format: format)
                }
                data.append(UInt8(ascii: "}"))
                return SSE.event("patch", pathText: relative.slashed, dataJSON: data)
            }
            if keys.contains(where: { path.appending(path: $0).overlaps(location) }) {
                return SSE.event("put", path: .root, data: root.child(at: location), format: format)
            }
            return nil
        }
    }
}

/// One `Accept: text/event-stream` response (§6.7).
final class EventStream {
    let id: UInt64
    let path: Path
    let exportFormat: Bool
    /// Who opened it: re-checked when the rules change.
    let caller: Caller
    /// The query of a query stream (`orderBy` with limits or ranges), nil for the whole location.
    let params: QueryParams?
    /// A query stream's window as last sent.
    var window: Node = .empty
    let responder: any HTTPResponder
    weak var namespace: Namespace?

    init(
        id: UInt64, path: Path, exportFormat: Bool, caller: Caller, params: QueryParams? = nil,
        responder: any HTTPResponder, namespace: Namespace
    ) {
        self.id = id
        self.path = path
        self.exportFormat = exportFormat
        self.caller = caller
        self.params = params
        self.responder = responder
        self.namespace = namespace
    }

    /// Ends the stream with `auth_revoked`: its credential expired (§6.7).
    func revokeAuth() {
        responder.onClose = nil
        namespace?.streams[id] = nil
        responder.sendFinal(SSE.authRevoked)
        responder.finish()
    }

    /// Ends the stream at once, dropping what is queued: its reader fell more than the outbound budget
    /// behind (ServerLimits.outboundBytesPerConnectionMax), and a `cancel` queued behind that backlog
    /// would never be read (STYLE §3.9).
    func disconnectSlowReader() {
        responder.onClose = nil
        namespace?.streams[id] = nil
        responder.abort()
    }

    /// Ends the stream with `cancel`, as Firebase does when it stops serving one.
    func cancel() {
        responder.onClose = nil
        namespace?.streams[id] = nil
        responder.sendFinal(SSE.cancel)
        responder.finish()
    }
}

/// Server-Sent Events framing: `event:` line, one `data:` line, blank line.
enum SSE {
    static let keepAlive = Array("event: keep-alive\ndata: null\n\n".utf8)
    static let cancel = Array("event: cancel\ndata: null\n\n".utf8)
    /// Python's SSE client reconnects on exactly this text (§6.7).
    static let authRevoked = Array("event: auth_revoked\ndata: credential is no longer valid\n\n".utf8)

    static func event(_ name: String, path: Path, data: Node, format: JSONFormat) -> [UInt8] {
        var json: [UInt8] = []
        data.appendJSON(to: &json, format: format)
        return event(name, pathText: path.slashed, dataJSON: json)
    }

    static func event(_ name: String, pathText: String, dataJSON: [UInt8]) -> [UInt8] {
        var bytes = Array("event: \(name)\ndata: {\"path\":".utf8)
        Node(pathText).appendJSON(to: &bytes)
        bytes.append(contentsOf: Array(",\"data\":".utf8))
        bytes.append(contentsOf: dataJSON)
        bytes.append(contentsOf: Array("}\n\n".utf8))
        return bytes
    }
}
