import HearthCore
import HearthProtocol
import HearthWire
import HearthStorage
import Foundation

/// One realtime connection (docs/protocol.md §1–§3): its protocol machine, listens, credential and
/// onDisconnect operations. Loop thread only.
final class RealtimeSession: RealtimeSessionHandle, FanOutTarget {

    let id: UInt64
    let sessionID: String
    unowned let server: DatabaseServer
    let sink: any RealtimeSink
    var machine = ConnectionMachine(messageBytesMax: ServerLimits.realtimeMessageBytesMax)
    var reassemblingByteCount: Int { machine.reassemblingByteCount }
    var namespace: Namespace?
    /// Who this connection acts as (`auth`/`unauth`).
    private(set) var caller = Caller.signedOut
    private var onDisconnect = OnDisconnectQueue()
    /// Requests received while the namespace was loading (``attach(to:)``).
    private var requestsBeforeLoad: [WireRequest] = []
    private var isClosed = false

    init(id: UInt64, server: DatabaseServer, sink: any RealtimeSink, sessionID: String) {
        self.id = id
        self.server = server
        self.sink = sink
        self.sessionID = sessionID
    }

    // MARK: Receiving

    func receive(frame: [UInt8]) {
        server.executor?.assertOnLoop("RealtimeSession.receive")
        guard !isClosed else { return }
        let message: IncomingMessage?
        do {
            message = try machine.receive(frame: frame)
        } catch {
            sink.close(reason: error.description, immediately: false)
            return
        }
        switch message {
        case nil, .control?:
            return
        case .ping?:
            send(WireEncoder.pong)
        case .request(let request)?:
            handle(request)
        }
    }

    func closed() {
        guard !isClosed else { return }
        isClosed = true
        machine.close(reason: "socket closed")
        guard let namespace else { return }
        namespace.listeners.detach(self)
        runOnDisconnect(namespace)
    }

    var hasOnDisconnectOperations: Bool { !onDisconnect.records.isEmpty }

    /// This node's cluster lease ran out, and another node ran this connection's onDisconnect operations
    /// if their record was stored before (the ledger's take tells, when the connection closes): closed,
    /// so that the client reconnects and registers them again.
    func leaseLost() {
        sink.close(reason: "this node's cluster lease ran out; another node ran this connection's onDisconnect operations", immediately: false)
    }

    /// Its namespace is being deleted: told so (`s`, as for a database that does not exist) and closed.
    /// Its onDisconnect operations go with the data.
    func namespaceDeleted() {
        _ = sink.sendMessage([WireEncoder.control(.shutdown, "This database was deleted by its admin")])
        sink.close(reason: "namespace deleted", immediately: false)
        guard !isClosed else { return }
        isClosed = true
        machine.close(reason: "namespace deleted")
        guard let namespace else { return }
        namespace.listeners.detach(self)
        recordOnDisconnect(namespace, forgetting: true)
    }

    /// A newer connection of the same client (`ls`) took over.
    func replaced() {
        sink.close(reason: "replaced by a newer connection of this client", immediately: false)
        closed()
    }

    /// The connection's verified token expired, or its account revoked it: `ac` (§3.4) with `push`'s
    /// status, then signed out. Listens that needed the token
    /// stop receiving updates, without `c`: the SDKs answer `ac` by reconnecting with a refreshed token and
    /// listening again, and a `c` would cancel the app's listeners for good.
    func credentialExpired(now: Int64, push: [UInt8]) {
        caller = .signedOut
        reply(push)
        _ = removeUnreadableListens(now: now)
    }

    /// Listens the caller may no longer read (new credential, new rules): `c` for each (§3.3), and no
    /// more updates.
    func revokeUnreadableListens(now: Int64) {
        for listen in removeUnreadableListens(now: now) {
            if !send(WireEncoder.listenRevoked(path: listen.path, queryJSON: listen.queryJSON)) { return disconnectSlowClient() }
        }
    }

    /// The listens this session's namespace (``Listeners``) no longer lets it keep.
    private func removeUnreadableListens(now: Int64) -> [ListenTable.Listen] {
        guard let namespace else { return [] }
        let caller = caller
        return namespace.listeners.removeUnreadable(self) { namespace.mayRead(caller, at: $0.path, query: $0.params, now: now) }
    }

    func deliver(_ messages: [[UInt8]]) -> Bool {
        guard !isClosed else { return true }
        for message in messages where !send(message) { return false }
        return true
    }

    func disconnectSlowReader() { disconnectSlowClient() }

    /// Over its outbound bound: told why and dropped at once; nobody else waits for it.
    func disconnectSlowClient() {
        sink.close(reason: "outbound queue over its limit: client too slow", immediately: true)
        closed()
    }

    @discardableResult
    private func send(_ message: [UInt8]) -> Bool {
        guard !isClosed else { return false }
        return sink.sendMessage(sink.splitsLargeMessages ? WireFrames.split(message) : [message])
    }

    private func reply(_ message: [UInt8]) {
        if !send(message) { disconnectSlowClient() }
    }

    // MARK: Requests

    /// Serves the namespace, once it is loaded; requests that came before are handled now, in order.
    func attach(to namespace: Namespace) {
        guard !isClosed else { return }
        self.namespace = namespace
        namespace.listeners.attach(self)
        let waiting = requestsBeforeLoad
        requestsBeforeLoad = []
        for request in waiting where !isClosed { handle(request) }
    }

    private func handle(_ request: WireRequest) {
        guard let namespace else {
            // Still loading: kept, up to the listen bound, and handled in order once it is there. Past
            // the bound the connection is closed rather than a request dropped unanswered: the SDKs
            // reconnect and send their listens and unacknowledged writes again.
            guard requestsBeforeLoad.count < ServerLimits.listensPerConnectionMax else {
                sink.close(reason: "more than \(ServerLimits.listensPerConnectionMax) requests while the database was loading", immediately: false)
                return
            }
            requestsBeforeLoad.append(request)
            return
        }
        let r = request.number
        guard let action = request.action else {
            reply(WireEncoder.error(r, .failure, "Unsupported action"))
            return
        }
        switch action {
        case .stats, .appCheck, .unAppCheck, .unAppCheckJS:
            reply(WireEncoder.ok(r))
        case .auth, .gauth:
            authenticate(request)
        case .unauth:
            caller = .signedOut
            revokeUnreadableListens(now: server.clock())
            reply(WireEncoder.ok(r))
        case .listen, .listenLegacy:
            listen(request, namespace: namespace)
        case .unlisten, .unlistenLegacy:
            if let path = request.path {
                namespace.listeners.unlisten(self, ListenTable.Key(path: path, tag: Self.tag(request)))
            }
            reply(WireEncoder.ok(r))
        case .put:
            put(request, namespace: namespace)
        case .merge:
            merge(request, namespace: namespace)
        case .get:
            get(request, namespace: namespace)
        case .onDisconnectPut, .onDisconnectMerge, .onDisconnectCancel:
            registerOnDisconnect(request, action: action, namespace: namespace)
        }
    }

    private static func tag(_ request: WireRequest) -> Int64? {
        if case .integer(let tag)? = request.node(Wire.tag)?.leafValue { return tag }
        return nil
    }

    private func authenticate(_ request: WireRequest) {
        let r = request.number
        guard let credential = request.node(Wire.credential)?.stringValue else {
            reply(WireEncoder.error(r, .invalidToken, "Could not parse auth token."))
            return
        }
        var authVariable = request.fields[Wire.authVariable]
        if authVariable == Array("null".utf8) { authVariable = nil }
        let noAuth = request.node(Wire.noAuth)?.boolValue == true
        switch server.realtimeAuthenticate(credential: credential, authVariable: authVariable, noAuth: noAuth) {
        case .success(let (granted, auth, expires)):
            caller = granted
            revokeUnreadableListens(now: server.clock())
            reply(WireEncoder.response(r, .ok, dataJSON: Array(#"{"auth":"#.utf8) + auth + Array(#","expires":"#.utf8) + expires + Array("}".utf8)))
        case .failure(let failure):
            reply(WireEncoder.error(r, failure.wireStatus, failure.message))
        }
    }

    private func queryParams(_ request: WireRequest) throws(DataError) -> QueryParams? {
        guard let raw = request.fields[Wire.query], let entries = JSONObjectSplitter.split(raw) else { return nil }
        var fields: [String: Node] = [:]
        for (key, value) in entries { fields[key] = (try? Node(jsonBytes: Array(value))) ?? .empty }
        let params = try QueryParams(wireFields: fields)
        return params.loadsAllData ? nil : params
    }

    /// The location and query a listen or get reads, or nil once the client is told what is wrong.
    private func readTarget(_ request: WireRequest, verb: String) -> (Path, QueryParams?)? {
        guard let path = request.path else {
            reply(WireEncoder.error(request.number, .failure, "\(verb) needs a path 'p'"))
            return nil
        }
        do {
            try KeyValidation.validate(readPath: path)
            return (path, try queryParams(request))
        } catch {
            reply(WireEncoder.error(request.number, .failure, error.message))
            return nil
        }
    }

    private func listen(_ request: WireRequest, namespace: Namespace) {
        let r = request.number
        guard let (path, params) = readTarget(request, verb: "Listen") else { return }
        let tag = Self.tag(request)
        // A listen without a tag is served the whole location (§2.4), so the rules decide it as a plain
        // read: its query may not unlock what query-based rules allow only for a window.
        guard namespace.mayRead(caller, at: path, query: tag == nil ? nil : params, now: server.clock()) else {
            reply(WireEncoder.error(r, .permissionDenied, "Permission denied"))
            return
        }
        guard namespace.listeners.admits(self, ListenTable.Key(path: path, tag: tag)) else {
            reply(WireEncoder.error(r, .failure, "Too many listens on this connection (\(namespace.listeners.listenLimit(self)))"))
            return
        }
        let root = namespace.database.root
        // A tagged listen with a query is served its window; anything else the whole location.
        let query = tag == nil ? nil : params
        let data = query.map { QueryWindow.node(of: root.child(at: path), params: $0) } ?? root.child(at: path)
        let listen = ListenTable.Listen(path: path, tag: tag, params: query, queryJSON: query == nil ? nil : request.fields[Wire.query])
        _ = namespace.listeners.listen(self, listen, window: query == nil ? .empty : data)
        let indexed = params.map { namespace.prepareIndex(for: $0, at: path) } ?? true
        server.metrics.countRead(.realtime)
        // `h`: the hash of what the client has cached for this view. When it is what the server would
        // send, the data is not sent again: the `ok` marks the client's cache complete as it is (§2.4),
        // so a reconnecting client re-downloads only the views that changed while it was away.
        // Hashing costs about what encoding the data would. `""` (no cache, or an empty one) always gets
        // the data, as production sends `null` then (the §9 transcript). Initial data goes before the `ok`.
        let clientHash = request.node(Wire.hash)?.stringValue ?? ""
        if clientHash.isEmpty || clientHash != data.hash {
            let message = query == nil ? WireEncoder.set(path: path, node: data) : WireEncoder.set(path: path, node: data, tag: tag)
            guard send(message) else { return disconnectSlowClient() }
        }
        reply(indexed ? WireEncoder.listenOK(r) : WireEncoder.listenOKWithoutIndex(r))
    }

    private func get(_ request: WireRequest, namespace: Namespace) {
        let r = request.number
        guard let (path, params) = readTarget(request, verb: "Get") else { return }
        guard namespace.mayRead(caller, at: path, query: params, now: server.clock()) else {
            reply(WireEncoder.error(r, .permissionDenied, "Permission denied"))
            return
        }
        server.metrics.countRead(.realtime)
        var value = namespace.database.root.child(at: path)
        if let params { value = QueryWindow.node(of: value, params: params) }
        var json: [UInt8] = []
        value.appendJSON(to: &json, format: .export)
        reply(WireEncoder.response(r, .ok, dataJSON: json))
    }

    /// The reply to write request `r` once the pipeline is done with it.
    private func writeAnswer(_ r: Int64) -> (WritePipeline.Outcome) -> Void {
        { [weak self] outcome in
            guard let self, !self.isClosed else { return }
            switch outcome {
            case .success: self.reply(WireEncoder.ok(r))
            case .failure(let failure): self.reply(WireEncoder.error(r, failure.wireStatus, failure.message))
            }
        }
    }

    private func put(_ request: WireRequest, namespace: Namespace) {
        let r = request.number
        guard let path = request.path, let raw = request.fields[Wire.data] else {
            reply(WireEncoder.error(r, .failure, "Put needs a path 'p' and data 'd'"))
            return
        }
        let value: Node, writeID: String?
        do throws(WriteFailure) {
            value = try WriteBody.value(raw, at: path)
            writeID = try WriteBody.writeID(request.fields[Wire.writeID])
        } catch {
            reply(WireEncoder.error(r, error.wireStatus, error.message))
            return
        }
        // A present `h` (even "") makes the put a compare-and-set (§2.6).
        let ifHash: String? = request.fields[Wire.hash].map { _ in request.node(Wire.hash)?.stringValue ?? "" }
        server.writes.submit(.set(path, value, ifHash: ifHash), by: caller, in: namespace, from: .realtime, writeID: writeID, answer: writeAnswer(r))
    }

    private func merge(_ request: WireRequest, namespace: Namespace) {
        let r = request.number
        guard let path = request.path, let raw = request.fields[Wire.data] else {
            reply(WireEncoder.error(r, .failure, "Merge needs a path 'p' and data 'd'"))
            return
        }
        let values: [(Path, Node)], writeID: String?
        do throws(WriteFailure) {
            values = try WriteBody.update(raw, at: path)
            writeID = try WriteBody.writeID(request.fields[Wire.writeID])
        } catch {
            reply(WireEncoder.error(r, error.wireStatus, error.message))
            return
        }
        if values.isEmpty {
            reply(WireEncoder.ok(r))
            return
        }
        server.writes.submit(.update(path, values), by: caller, in: namespace, from: .realtime, writeID: writeID, answer: writeAnswer(r))
    }

    // MARK: onDisconnect (§2.8)

    private func registerOnDisconnect(_ request: WireRequest, action: Wire.Action, namespace: Namespace) {
        let r = request.number
        guard let path = request.path else {
            reply(WireEncoder.error(r, .failure, "onDisconnect needs a path 'p'"))
            return
        }
        let writes: [(Path, Node)]
        do throws(WriteFailure) {
            switch action {
            case .onDisconnectPut:
                writes = [(path, try WriteBody.value(request.fields[Wire.data] ?? Array("null".utf8), at: path))]
            case .onDisconnectMerge:
                writes = try WriteBody.update(request.fields[Wire.data] ?? Array("{}".utf8), at: path)
                    .map { (path.appending(path: $0.0), $0.1) }
            default:
                onDisconnect.cancel(at: path)
                recordOnDisconnect(namespace)
                return reply(WireEncoder.ok(r))
            }
        } catch {
            return reply(WireEncoder.error(r, error.wireStatus, error.message))
        }
        guard mayWriteNow(writes, namespace: namespace) else {
            return reply(WireEncoder.error(r, .permissionDenied, "Permission denied"))
        }
        let limit = ServerLimits.onDisconnectOperationsPerConnectionMax
        guard onDisconnect.record(writes, as: caller, limit: limit) else {
            return reply(WireEncoder.error(r, .failure, "Too many onDisconnect operations (\(limit))"))
        }
        recordOnDisconnect(namespace)
        reply(WireEncoder.ok(r))
    }

    /// Whether the caller could make these writes now (onDisconnect operations are checked when they
    /// are registered, as Firebase does, and again when they run).
    private func mayWriteNow(_ writes: [(Path, Node)], namespace: Namespace) -> Bool {
        let now = server.clock()
        guard let check = namespace.writeCheck(caller, now: now) else { return true }
        let before = namespace.database.root
        var after = before
        for (path, value) in writes {
            guard let resolved = try? ServerValues.resolve(value, at: path, in: after, now: now) else { return false }
            _ = after.set(path, to: resolved)
        }
        return check(writes.map(\.0), before, after) == nil
    }

    /// Tells the cluster's ledger what is recorded now, so another node runs it if this one dies.
    private func recordOnDisconnect(_ namespace: Namespace, forgetting: Bool = false) {
        guard let ledger = server.onDisconnectLedger else { return }
        ledger.record(session: String(id), namespace: namespace.name, operations: forgetting ? [] : onDisconnect.records)
    }

    /// Runs what is recorded, one atomic multi-path write per credential that registered it. In a cluster,
    /// only once the ledger's record is taken for this node, and carried out by the write: run exactly
    /// once, here or (when this node's lease ran out) by another node.
    private func runOnDisconnect(_ namespace: Namespace) {
        let groups = onDisconnect.drain()
        guard server.onDisconnectLedger != nil else { return server.runOnDisconnect(groups, in: namespace, ledgerKey: nil) }
        guard !groups.isEmpty else { return recordOnDisconnect(namespace) }
        server.runOnDisconnect(groups, in: namespace, ledgerKey: String(id))
    }
}
