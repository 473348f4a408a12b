import HearthCore
public import HearthProtocol
import HearthStorage
import Foundation

extension DatabaseServer: RealtimeHandler {
    public func acceptsRealtime(path: String) -> Bool { path == "/.ws" }

    public func openRealtime(_ request: HTTPRequest, sink: any RealtimeSink) -> any RealtimeSessionHandle {
        let host = request.headers["host"].flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        let ns = request.queryItems.first { $0.name == Wire.namespaceParameter }?.value
        let namespaceName = (ns?.isEmpty == false ? ns : nil) ?? Self.namespace(fromHost: host)
            ?? configuration.defaultNamespace
        let session = RealtimeSession(id: nextStreamID, server: self, sink: sink, sessionID: Self.sessionID())
        nextStreamID += 1
        if let upgrading = request.queryItems.first(where: { $0.name == Wire.transportSessionParameter })?.value, !upgrading.isEmpty {
            // A long-poll client upgrading its session (`s=`): refused with `r`, so it stays on long-poll
            // (§1.10); the socket is never a fresh session.
            _ = sink.sendMessage([WireEncoder.control(.reset, host)])
            session.machine.close(reason: "long-poll upgrade refused")
            sink.close(reason: "long-poll upgrade refused", immediately: false)
            return session
        }
        let frames = session.machine.open(timestamp: clock(), host: host, sessionID: session.sessionID)
        _ = sink.sendMessage(frames)
        let lastSession = request.queryItems.first(where: { $0.name == Wire.lastSessionParameter })?.value
        // A realtime connection has no credential yet: it may only open a namespace that exists.
        let attach = { (result: Result<Namespace, RESTError>) in
            switch result {
            case .success(let namespace):
                // `ls`: the client's previous connection, if still open, is closed and its onDisconnect runs (§1.4).
                if let last = lastSession, !last.isEmpty, let previousID = namespace.realtimeSessionIDs[last],
                    let previous = namespace.realtimeSessions[previousID]
                {
                    previous.replaced()
                }
                session.attach(to: namespace)
            case .failure(let error):
                // A namespace that cannot be served is fatal for this client (§1.5 `s`).
                _ = sink.sendMessage([WireEncoder.control(.shutdown, error.message)])
                session.machine.close(reason: error.message)
                sink.close(reason: "namespace unavailable", immediately: false)
            }
        }
        if mayOpen(namespaceName, isAdmin: false) {
            withNamespace(namespaceName, attach)
        } else {
            attach(.failure(Self.noSuchNamespace(namespaceName)))
        }
        return session
    }

    /// 32 URL-safe random characters (§1.4 `s`).
    static func sessionID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var generator = SystemRandomNumberGenerator()
        return String((0..<32).map { _ in alphabet[Int(generator.next() % 64)] })
    }

    // MARK: Realtime credentials (§2.3)

    /// Who `auth`/`gauth` with `credential` makes the connection, and the reply's `auth`/`expires` JSON.
    /// An admin credential with `authvar` acts as that user, with `noauth` as signed out.
    func realtimeAuthenticate(credential: String, authVariable: [UInt8]?, noAuth: Bool)
        -> Result<(Caller, auth: [UInt8], expires: [UInt8]), RealtimeAuthFailure>
    {
        let null = Array("null".utf8)
        var override: Node?
        if noAuth {
            override = .empty
        } else if let authVariable {
            guard let parsed = try? Node(jsonBytes: authVariable) else {
                return .failure(RealtimeAuthFailure(status: .invalidToken, message: "Could not parse auth token."))
            }
            override = parsed
        }
        switch caller(credential: credential, authVariable: override) {
        case .failure(let failure):
            return .failure(failure)
        case .success(let caller):
            guard let auth = caller.auth else { return .success((caller, null, null)) }
            var expires = null
            if case .integer(let exp)? = auth.child(at: Path("token/exp")).leafValue { expires = Array(String(exp).utf8) }
            return .success((caller, Array(auth.json().utf8), expires))
        }
    }

    // MARK: Realtime writes

    /// Applies a write from a realtime session (or its onDisconnect), then on the loop tells every
    /// stream and every realtime listener, and only then calls `answered` (the writer's reply).
    func realtimeWrite(
        _ kind: Write, caller: Caller, namespace: Namespace,
        apply: (DurableDatabase, Int64, DurableDatabase.WriteCheck?, @escaping Completion) -> Void,
        answered: @escaping (Result<Void, any Error>) -> Void
    ) {
        guard let executor else { return }
        let pending = RealtimePendingWrite(namespace: namespace, kind: kind, answered: answered)
        applyWrite(caller: caller, namespace: namespace, executor: executor, apply) { pending.finish($0, executor: executor) }
    }
}

struct RealtimeAuthFailure: Error {
    var status: Wire.Status
    var message: String
    /// A good token whose account no longer accepts it (REST says so instead of "could not parse").
    var revoked = false
}

/// A realtime write waiting for its commit; touched only on the loop thread.
final class RealtimePendingWrite: @unchecked Sendable {
    let namespace: Namespace
    let kind: Write
    let answered: (Result<Void, any Error>) -> Void

    init(namespace: Namespace, kind: Write, answered: @escaping (Result<Void, any Error>) -> Void) {
        self.namespace = namespace
        self.kind = kind
        self.answered = answered
    }

    func finish(_ result: Result<DurableDatabase.CommittedWrite, any Error>, executor: any LoopExecutor) {
        switch result {
        case .success(let committed):
            // Pushes to every listener (the writer's included) are queued before the writer's reply (§3.2).
            namespace.publish(CommittedChange(write: kind, root: committed.root, changes: committed.changes))
            answered(.success(()))
        case .failure(let error as DataError) where error.code == .hashMismatch:
            // `datastale` once every write queued before has committed and been pushed, so the client
            // already holds the value that made its hash stale when it retries (§2.6).
            namespace.database.engine.append(WriteBatch(operations: [])) { _ in
                executor.execute { self.answered(.failure(error)) }
            }
        case .failure(let error):
            answered(.failure(error))
        }
    }
}

/// One realtime connection (rtdb-protocol.md §1–§3): its protocol machine, listens, credential and
/// onDisconnect operations. Loop thread only.
final class RealtimeSession: RealtimeSessionHandle, FanOutTarget {

    let id: UInt64
    let sessionID: String
    unowned let server: DatabaseServer
    let sink: any RealtimeSink
    var machine = ConnectionMachine(messageBytesMax: ServerLimits.realtimeMessageBytesMax)
    var namespace: Namespace?
    /// Who this connection acts as (`auth`/`unauth`).
    private(set) var caller = Caller.signedOut
    /// Changed only through ``setListen(_:for:window:)``, ``removeListen(_:)`` and ``removeAllListens()``,
    /// which keep the namespace's ``FanOut`` in step.
    private var listens: [ListenKey: Listen] = [:]
    private var onDisconnect: [OnDisconnectOperation] = []
    /// Requests received while the namespace was loading (``attach(to:)``).
    private var requestsBeforeLoad: [WireRequest] = []
    private var isClosed = false

    struct ListenKey: Hashable {
        var path: Path
        var tag: Int64?
    }

    /// What the session keeps of one listen; its window and delivery live in the namespace's ``FanOut``.
    struct Listen {
        let path: Path
        let tag: Int64?
        let params: QueryParams?
        /// The query object exactly as the client sent it, for `c` (§3.3).
        let queryJSON: [UInt8]?
    }

    /// One recorded overwrite (`om` records one per key).
    enum OnDisconnectOperation {
        /// An overwrite, with who registered it: it runs with that credential, even if the connection
        /// later signed out or its token expired (a presence flag must still go offline).
        case set(Path, Node, Caller)
    }

    init(id: UInt64, server: DatabaseServer, sink: any RealtimeSink, sessionID: String) {
        self.id = id
        self.server = server
        self.sink = sink
        self.sessionID = sessionID
    }

    // MARK: Receiving

    func receive(frame: [UInt8]) {
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
        removeAllListens()
        guard let namespace else { return }
        namespace.realtimeSessions[id] = nil
        namespace.realtimeSessionIDs[sessionID] = nil
        runOnDisconnect(namespace)
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
        guard let namespace else { return }
        for (key, listen) in listens where !namespace.mayRead(caller, at: listen.path, query: listen.params, now: now) {
            removeListen(key)
        }
    }

    /// Listens the caller may no longer read (new credential, new rules): `c` for each (§3.3), and no
    /// more updates.
    func revokeUnreadableListens(now: Int64) {
        guard let namespace, !listens.isEmpty else { return }
        for (key, listen) in listens where !namespace.mayRead(caller, at: listen.path, query: listen.params, now: now) {
            removeListen(key)
            let query = listen.tag == nil ? nil : listen.queryJSON
            if !send(WireEncoder.listenRevoked(path: listen.path, queryJSON: query)) { return disconnectSlowClient() }
        }
    }

    private func setListen(_ listen: Listen, for key: ListenKey, window: Node) {
        listens[key] = listen
        namespace?.fanOut.subscribe(
            fanOutKey(key), FanOut.Subscription(target: self, encoding: .realtime(tag: key.tag), params: listen.params, window: window))
    }

    private func removeListen(_ key: ListenKey) {
        if listens.removeValue(forKey: key) != nil { namespace?.fanOut.unsubscribe(fanOutKey(key)) }
    }

    private func removeAllListens() {
        if let namespace {
            for key in listens.keys { namespace.fanOut.unsubscribe(fanOutKey(key)) }
        }
        listens.removeAll()
    }

    private func fanOutKey(_ key: ListenKey) -> FanOut.Key { FanOut.Key(subscriber: id, location: key.path, tag: key.tag) }

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
        return sink.sendMessage(sink.splitsLargeMessages ? ConnectionMachine.frames(for: message) : [message])
    }

    private func reply(_ message: [UInt8]) {
        if !send(message) { disconnectSlowClient() }
    }

    // MARK: Requests

    /// Serves the namespace, once it is loaded; requests that came before are handled now, in order.
    func attach(to namespace: Namespace) {
        guard !isClosed else { return }
        self.namespace = namespace
        namespace.realtimeSessions[id] = self
        namespace.realtimeSessionIDs[sessionID] = id
        let waiting = requestsBeforeLoad
        requestsBeforeLoad = []
        for request in waiting where !isClosed { handle(request) }
    }

    private func handle(_ request: WireRequest) {
        guard let namespace else {
            // Still loading: kept, up to the listen bound, and handled in order once it is there.
            if requestsBeforeLoad.count < ServerLimits.listensPerConnectionMax { requestsBeforeLoad.append(request) }
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
                removeListen(ListenKey(path: path, tag: Self.tag(request)))
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
            reply(WireEncoder.error(r, failure.status, failure.message))
        }
    }

    private func queryParams(_ request: WireRequest) throws(DataError) -> QueryParams? {
        guard let raw = request.fields[Wire.query], let entries = JSONObjectSplitter.split(raw) else { return nil }
        var fields: [String: Node] = [:]
        for (key, value) in entries { fields[key] = (try? Node(jsonBytes: Array(value))) ?? .empty }
        let params = try QueryParams(wireFields: fields)
        return params.loadsAllData ? nil : params
    }

    private func listen(_ request: WireRequest, namespace: Namespace) {
        let r = request.number
        guard let path = request.path else {
            reply(WireEncoder.error(r, .failure, "Listen needs a path 'p'"))
            return
        }
        do { try KeyValidation.validate(readPath: path) } catch {
            reply(WireEncoder.error(r, .failure, error.message))
            return
        }
        let params: QueryParams?
        do { params = try queryParams(request) } catch {
            reply(WireEncoder.error(r, .failure, error.message))
            return
        }
        let tag = Self.tag(request)
        // A listen without a tag is served the whole location (§2.4), so the rules decide it as a plain
        // read: its query may not unlock what query-based rules allow only for a window.
        guard namespace.mayRead(caller, at: path, query: tag == nil ? nil : params, now: server.clock()) else {
            reply(WireEncoder.error(r, .permissionDenied, "Permission denied"))
            return
        }
        let key = ListenKey(path: path, tag: tag)
        guard listens[key] != nil || listens.count < ServerLimits.listensPerConnectionMax else {
            reply(WireEncoder.error(r, .failure, "Too many listens on this connection (\(ServerLimits.listensPerConnectionMax))"))
            return
        }
        let indexed = params.map { namespace.prepareIndex(for: $0, at: path) } ?? true
        let root = namespace.database.root
        // `h`: the hash of what the client has cached for this view. When it is what the server would
        // send, the data is not sent again: the `ok` marks the client's cache complete as it is (§2.4),
        // so a reconnecting client re-downloads only the views that changed while it was away.
        // Hashing costs about what encoding the data would. `""` (no cache, or an empty one) always gets
        // the data, as production sends `null` then (the §9 transcript).
        let clientHash = request.node(Wire.hash)?.stringValue ?? ""
        func isCached(_ node: Node) -> Bool { !clientHash.isEmpty && clientHash == node.hash }
        if let params, tag != nil {
            let window = QueryWindow.node(of: root.child(at: path), params: params)
            setListen(Listen(path: path, tag: tag, params: params, queryJSON: request.fields[Wire.query]), for: key, window: window)
            // Initial data before the `ok` (§2.4).
            if !isCached(window) {
                guard send(WireEncoder.set(path: path, node: window, tag: tag)) else { return disconnectSlowClient() }
            }
        } else {
            setListen(Listen(path: path, tag: nil, params: nil, queryJSON: nil), for: key, window: .empty)
            let value = root.child(at: path)
            if !isCached(value) {
                guard send(WireEncoder.set(path: path, node: value)) else { return disconnectSlowClient() }
            }
        }
        reply(indexed ? WireEncoder.listenOK(r) : WireEncoder.listenOKWithoutIndex(r))
    }

    private func get(_ request: WireRequest, namespace: Namespace) {
        let r = request.number
        guard let path = request.path else {
            reply(WireEncoder.error(r, .failure, "Get needs a path 'p'"))
            return
        }
        do { try KeyValidation.validate(readPath: path) } catch {
            reply(WireEncoder.error(r, .failure, error.message))
            return
        }
        let params: QueryParams?
        do { params = try queryParams(request) } catch {
            reply(WireEncoder.error(r, .failure, error.message))
            return
        }
        guard namespace.mayRead(caller, at: path, query: params, now: server.clock()) else {
            reply(WireEncoder.error(r, .permissionDenied, "Permission denied"))
            return
        }
        var value = namespace.database.root.child(at: path)
        if let params { value = QueryWindow.node(of: value, params: params) }
        var json: [UInt8] = []
        value.appendJSON(to: &json, format: .export)
        reply(WireEncoder.response(r, .ok, dataJSON: json))
    }

    private func writeAnswer(_ r: Int64) -> (Result<Void, any Error>) -> Void {
        { [weak self] result in
            guard let self, !self.isClosed else { return }
            switch result {
            case .success:
                self.reply(WireEncoder.ok(r))
            case .failure(let error as DataError) where error.code == .hashMismatch:
                self.reply(WireEncoder.error(r, .dataStale, "Transaction hash does not match"))
            case .failure(is PermissionDenied):
                self.reply(WireEncoder.error(r, .permissionDenied, "Permission denied"))
            case .failure(let error as DataError):
                self.reply(WireEncoder.error(r, .failure, error.message))
            case .failure(let error):
                self.reply(WireEncoder.error(r, .failure, "\(error)"))
            }
        }
    }

    private func put(_ request: WireRequest, namespace: Namespace) {
        let r = request.number
        guard let path = request.path, let raw = request.fields[Wire.data] else {
            reply(WireEncoder.error(r, .failure, "Put needs a path 'p' and data 'd'"))
            return
        }
        let value: Node
        do {
            value = try Node(jsonBytes: raw, options: .init(validation: .write(at: path)))
        } catch {
            reply(WireEncoder.error(r, .failure, error.message))
            return
        }
        // A present `h` (even "") makes the put a compare-and-set (§2.6).
        let ifHash: String? = request.fields[Wire.hash].map { _ in request.node(Wire.hash)?.stringValue ?? "" }
        let caller = self.caller
        server.realtimeWrite(.set(path), caller: caller, namespace: namespace, apply: { db, now, check, completion in
            let check = namespace.compareAndSetCheck(check, caller: caller, at: path, ifHash: ifHash, now: now)
            db.set(path, to: value, ifHash: ifHash, now: now, check: check, completion: completion)
        }, answered: writeAnswer(r))
    }

    private func merge(_ request: WireRequest, namespace: Namespace) {
        let r = request.number
        guard let path = request.path, let raw = request.fields[Wire.data] else {
            reply(WireEncoder.error(r, .failure, "Merge needs a path 'p' and data 'd'"))
            return
        }
        let values: [(Path, Node)]
        do { values = try DatabaseServer.parseUpdate(raw, at: path) } catch {
            reply(WireEncoder.error(r, .failure, error.message))
            return
        }
        if values.isEmpty {
            reply(WireEncoder.ok(r))
            return
        }
        server.realtimeWrite(.update(path, values.map(\.0)), caller: caller, namespace: namespace, apply: {
            db, now, check, completion in
            db.update(path, with: values, now: now, check: check, completion: completion)
        }, answered: writeAnswer(r))
    }

    // MARK: onDisconnect (§2.8)

    private func registerOnDisconnect(_ request: WireRequest, action: Wire.Action, namespace: Namespace) {
        let r = request.number
        guard let path = request.path else {
            reply(WireEncoder.error(r, .failure, "onDisconnect needs a path 'p'"))
            return
        }
        do {
            switch action {
            case .onDisconnectPut:
                let value = try DatabaseServer.parseBody(request.fields[Wire.data] ?? Array("null".utf8), at: path)
                guard mayWriteNow([(path, value)], namespace: namespace) else {
                    reply(WireEncoder.error(r, .permissionDenied, "Permission denied"))
                    return
                }
                cancelOnDisconnect(at: path)
                onDisconnect.append(.set(path, value, caller))
            case .onDisconnectMerge:
                let values = try DatabaseServer.parseUpdate(request.fields[Wire.data] ?? Array("{}".utf8), at: path)
                guard mayWriteNow(values.map { (path.appending(path: $0.0), $0.1) }, namespace: namespace) else {
                    reply(WireEncoder.error(r, .permissionDenied, "Permission denied"))
                    return
                }
                for (key, value) in values {
                    cancelOnDisconnect(at: path.appending(path: key))
                    onDisconnect.append(.set(path.appending(path: key), value, caller))
                }
            default:
                cancelOnDisconnect(at: path)
            }
        } catch {
            reply(WireEncoder.error(r, .failure, error.message))
            return
        }
        if onDisconnect.count > ServerLimits.onDisconnectOperationsPerConnectionMax {
            onDisconnect.removeLast()
            reply(WireEncoder.error(r, .failure, "Too many onDisconnect operations (\(ServerLimits.onDisconnectOperationsPerConnectionMax))"))
            return
        }
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

    /// Forgets what is recorded at or below `path`; an overwrite recorded above it is split into its
    /// children so only the cancelled subtree is dropped and the rest is still written.
    private func cancelOnDisconnect(at path: Path) {
        var kept: [OnDisconnectOperation] = []
        for case .set(let at, let value, let registrant) in onDisconnect {
            if path.contains(at) { continue }
            if at.contains(path) {
                kept += Self.split(at: at, value: value, removing: path, caller: registrant)
            } else {
                kept.append(.set(at, value, registrant))
            }
        }
        onDisconnect = kept
    }

    /// The overwrite of `value` at `at`, as per-child overwrites that leave `removed` (below `at`) alone.
    static func split(at: Path, value: Node, removing removed: Path, caller: Caller) -> [OnDisconnectOperation] {
        guard at != removed, let next = removed.relative(to: at)?.first else { return [] }
        var operations: [OnDisconnectOperation] = []
        value.children.forEach { key, child in
            if key == next {
                operations += split(at: at.appending(key), value: child, removing: removed, caller: caller)
            } else {
                operations.append(.set(at.appending(key), child, caller))
            }
            return true
        }
        return operations
    }

    /// Runs what is recorded as one atomic multi-path write per credential that registered it (the
    /// recorded overwrites never overlap), so the rules decide it whole, as they did at registration.
    private func runOnDisconnect(_ namespace: Namespace) {
        var groups: [(caller: Caller, values: [(Path, Node)])] = []
        for case .set(let path, let value, let registrant) in onDisconnect {
            if let last = groups.indices.last, groups[last].caller.isAdmin == registrant.isAdmin,
                groups[last].caller.auth == registrant.auth
            {
                groups[last].values.append((path, value))
            } else {
                groups.append((registrant, [(path, value)]))
            }
        }
        onDisconnect = []
        for group in groups {
            let values = group.values
            server.realtimeWrite(.update(.root, values.map(\.0)), caller: group.caller, namespace: namespace, apply: {
                db, now, check, completion in
                db.update(.root, with: values, now: now, check: check, completion: completion)
            }, answered: { _ in })
        }
    }
}
