import Foundation
import HearthCore
public import HearthProtocol
import HearthRules
public import HearthStorage
public import HearthSupport

/// Firebase's Realtime Database over any ``HTTPHandler`` transport: REST and SSE (docs/protocol.md
/// §6–§8), realtime sessions over WebSockets and long-polling (§1–§3), and Firebase Auth's endpoints
/// forwarded to an ``IdentityService``. It routes; the work is done by its parts:
///
/// - ``NamespaceRegistry``: which namespaces exist, opening and loading them, their rules files;
/// - ``Credentials``: who a credential makes its bearer (a ``Caller``);
/// - ``RESTHandler`` and ``RulesEndpoint``: REST reads, streams and writes; the rules endpoint;
/// - ``RealtimeSession``: one realtime connection each;
/// - ``WritePipeline``: every write, whichever protocol sent it, and ``FanOut`` inside each
///   ``Namespace``: what a committed write sends to whom.
///
/// Runs on the transport's event-loop thread with no locks of its own (docs/ARCHITECTURE.md). Writes
/// commit on the storage thread and come back to the loop through the ``LoopExecutor``.
///
///     let server = DatabaseServer(configuration: .init(emulator: true, adminToken: nil, defaultNamespace: "demo"),
///                                 openEngine: { try SQLiteStorageEngine(directory: "hearth-data", namespace: $0) })
public final class DatabaseServer: HTTPHandler, @unchecked Sendable {
    public let configuration: ServerConfiguration
    let namespaces: NamespaceRegistry
    let credentials: Credentials
    let writes: WritePipeline
    let rest: RESTHandler
    let subscriberIDs = SubscriberIDs()
    let metrics: ServerMetrics
    let log: Log
    /// Firebase Auth on the same port (see AuthRoutes.swift), and what verifies ID tokens; nil serves no
    /// auth endpoints and verifies no tokens (emulator mode still reads unsigned ones).
    public var identity: (any IdentityService)? { credentials.identity }
    var executor: (any LoopExecutor)?
    /// The static files of `hearth serve --public DIR`; nil serves none.
    public let site: StaticSite?
    /// Where a cluster keeps onDisconnect operations for other nodes to run if this one dies; nil on a
    /// single node.
    public let onDisconnectLedger: (any OnDisconnectLedger)?
    /// Webhook delivery (`/.settings/hooks…`, docs/functions.md); nil answers those endpoints with 501.
    public let hooks: (any HookService)?
    /// The scheduled backups, for the console's list and its restore from one; nil when none are made.
    public let backups: BackupCatalogue?
    /// The console: its pages, sign-in sessions, API and usage history.
    lazy var console = Console(server: self, now: clock())
    /// Long-poll sessions (`/.lp`).
    let longPolls = LongPolls()
    private var lastKeepAlive: Int64 = 0
    /// Wall clock in milliseconds; replaceable in tests (the parts read it through ``ServerClock``).
    public var clock: @Sendable () -> Int64 {
        get { serverClock.read }
        set { serverClock.read = newValue }
    }
    private let serverClock = ServerClock()

    /// Everything the server is made of, given once (`hearth serve` builds it): `identity` serves Firebase
    /// Auth and verifies ID tokens, `site` is `--public`'s files, `onDisconnectLedger` a cluster's.
    public init(
        configuration: ServerConfiguration, rules: RulesStorage = .inMemory(),
        files: NamespaceFiles = .none, log: Log = .standardError,
        identity: (any IdentityService)? = nil, site: StaticSite? = nil, onDisconnectLedger: (any OnDisconnectLedger)? = nil,
        hooks: (any HookService)? = nil, backups: BackupCatalogue? = nil,
        openEngine: @escaping @Sendable (String) throws -> any StorageEngine
    ) {
        self.configuration = configuration
        self.hooks = hooks
        self.backups = backups
        self.site = site
        self.onDisconnectLedger = onDisconnectLedger
        self.log = log
        let metrics = ServerMetrics(startedAt: serverClock.read())
        self.metrics = metrics
        namespaces = NamespaceRegistry(
            emulator: configuration.emulator, rules: rules, files: files, log: log,
            metrics: metrics, openEngine: openEngine)
        credentials = Credentials(emulator: configuration.emulator, adminToken: configuration.adminToken, identity: identity)
        let now = { [serverClock] in serverClock.read() }
        writes = WritePipeline(clock: now, metrics: metrics)
        writes.log = log
        longPolls.log = log
        rest = RESTHandler(writes: writes, subscriberIDs: subscriberIDs, clock: now, metrics: metrics)
    }

    /// The link `hearth serve` prints when a person reads its output (a terminal): it signs the admin in
    /// to the console once, within a day.
    public func consoleSignInLink(base: String) -> String { console.signInLink(base: base) }

    /// Namespaces opened so far.
    public var namespaceNames: [String] { namespaces.names }

    /// Closes every namespace's engine, waiting for queued commits. Call after the loop has stopped.
    public func close() { namespaces.close() }

    // MARK: HTTPHandler

    public func memoryBudgetAvailable(_ budget: any HeldMemoryBudget) { longPolls.budget = budget }

    public func loopStarted(executor: any LoopExecutor) {
        self.executor = executor
        namespaces.executor = executor
        writes.executor = executor
        longPolls.executor = executor
        lastKeepAlive = clock()
        onDisconnectLedger?.start(
            orphans: { namespace, claim, records in
                executor.execute { [weak self] in self?.runOrphanedOnDisconnect(namespace, claim, records) }
            },
            leaseLost: { executor.execute { [weak self] in self?.closeSessionsAfterLostLease() } })
        hooks?.start(host: self)
    }

    /// Another server deployed rules to `namespace` (a cluster): they are read and applied here too. Any
    /// thread.
    public func rulesChanged(in namespace: String) {
        executor?.execute { [weak self] in
            guard let self else { return }
            namespaces.reloadRules(namespace, now: clock)
        }
    }

    /// Another server deleted `namespace` and its stored data (a cluster): its clients here are told and
    /// disconnected as that server's were, and it is closed here. Any thread.
    public func namespaceDeleted(elsewhere namespace: String) {
        executor?.execute { [weak self] in self?.namespaces.close(deletedElsewhere: namespace) }
    }

    /// Runs the onDisconnect operations of a node that died (``OnDisconnectLedger``), as that node would
    /// have: one merge per credential, checked by the rules now.
    private func runOrphanedOnDisconnect(_ name: String, _ claim: LedgerEntry, _ records: [OnDisconnectRecord]) {
        namespaces.withNamespace(name) { [self] result in
            guard case .success(let namespace) = result else {
                return log("hearth: the onDisconnect operations of a stopped node for '\(name)' were not run: the namespace cannot be opened.")
            }
            runOnDisconnect(OnDisconnectQueue.groups(records), in: namespace, ledgerKey: claim.key)
        }
    }

    /// Runs a connection's onDisconnect operations, one merge per credential. In a cluster their record
    /// in the ledger (`ledgerKey`: the connection's session, or a claim's key) is taken for this node
    /// first, and the last write carries it out (removes it in its commit): they run once, here or on
    /// another node. When the rules refuse that write the record is dropped. A write that fails in
    /// storage is tried again each second (taking the record again first), up to
    /// `onDisconnectStorageRetriesMax` times; then the record stays in the ledger, for another node once
    /// this one stops.
    func runOnDisconnect(_ groups: [(caller: Caller, values: [(Path, Node)])], in namespace: Namespace, ledgerKey: String?, attempt: Int = 0) {
        executor?.assertOnLoop("DatabaseServer.runOnDisconnect")
        guard let ledger = onDisconnectLedger, let ledgerKey, let executor else {
            return submitOnDisconnect(groups, in: namespace, carryingOut: nil, attempt: attempt)
        }
        let waiting = LoopBound((self, groups, namespace))
        ledger.take(ledgerKey) { entry in
            guard let entry else { return }  // another node's to run now
            executor.execute {
                let (server, groups, namespace) = waiting.value
                guard !groups.isEmpty else { return server.onDisconnectLedger?.drop(entry) ?? () }
                server.submitOnDisconnect(groups, in: namespace, carryingOut: entry, attempt: attempt)
            }
        }
    }

    private func submitOnDisconnect(_ groups: [(caller: Caller, values: [(Path, Node)])], in namespace: Namespace, carryingOut claim: LedgerEntry?, attempt: Int) {
        for (index, group) in groups.enumerated() {
            let last = index == groups.count - 1
            let carried = last ? claim : nil
            writes.submit(.update(.root, group.values), by: group.caller, in: namespace, from: .onDisconnect, carryingOut: carried.map { [$0] } ?? []) { [weak self] outcome in
                guard let self, case .failure(let failure) = outcome else { return }
                guard failure.isStorage else {
                    if let carried { onDisconnectLedger?.drop(carried) }
                    return
                }
                guard attempt < Self.onDisconnectStorageRetriesMax, let executor else {
                    return log("hearth: onDisconnect operations for '\(namespace.name)' failed in storage \(attempt + 1) times; they stay in the cluster's ledger for another node to run once this one stops.")
                }
                let again = LoopBound((self, group, namespace))
                DispatchQueue.global().asyncAfter(deadline: .now() + 1) {
                    executor.execute {
                        let (server, group, namespace) = again.value
                        server.runOnDisconnect([group], in: namespace, ledgerKey: carried?.key, attempt: attempt + 1)
                    }
                }
            }
        }
    }

    /// Tries of an onDisconnect write that failed in storage, a second apart.
    static let onDisconnectStorageRetriesMax = 30

    /// This node's cluster lease ran out while it was paused or cut off, and other nodes ran its
    /// connections' onDisconnect operations: the connections that had some are closed, their operations
    /// unrun here, and their clients reconnect (and register them again). The others lost nothing.
    private func closeSessionsAfterLostLease() {
        for namespace in namespaces.all {
            for session in Array(namespace.listeners.realtimeSessions) where session.hasOnDisconnectOperations { session.leaseLost() }
        }
    }

    public func loopStopping() {
        longPolls.endAll()
        for namespace in namespaces.all {
            for stream in Array(namespace.streams.values) { stream.finish() }
            for feed in Array(namespace.consoleFeeds.values) { feed.finish() }
            for stream in Array(namespace.changeFeedStreams.values) { stream.finish() }
        }
    }

    public var hasOutputComing: Bool { writes.hasWritesCommitting }

    public func tick(nowMilliseconds: Int64) {
        executor?.assertOnLoop("DatabaseServer.tick")
        longPolls.tick(now: nowMilliseconds)
        expireCredentials(now: nowMilliseconds)
        console.tick(now: nowMilliseconds)
        guard nowMilliseconds - lastKeepAlive >= Int64(configuration.keepAliveIntervalSeconds) * 1000 else { return }
        lastKeepAlive = nowMilliseconds
        for namespace in namespaces.all {
            var cutOff: [EventStream] = []
            for stream in namespace.streams.values where !stream.responder.send(SSE.keepAlive) {
                cutOff.append(stream)
            }
            for stream in cutOff { stream.disconnectSlowReader() }
            for feed in Array(namespace.consoleFeeds.values) { feed.keepAlive() }
            for stream in Array(namespace.changeFeedStreams.values) { stream.keepAlive() }
        }
    }

    /// Firebase's error shape, `{"error": message}`, for requests the transport refuses.
    public func refusal(status: Int, message: String) -> HTTPResponse {
        RESTResponses.error(RESTError(status, message))
    }

    public func handle(_ request: HTTPRequest, responder: any HTTPResponder) {
        executor?.assertOnLoop("DatabaseServer.handle")
        metrics.countHTTPRequest()
        do {
            try route(request, responder: responder)
        } catch {
            responder.respond(RESTResponses.error(error))
        }
    }

    // MARK: Routing

    /// The routes, tried in this order (RouteTable.swift); the database's REST comes last and takes the
    /// rest.
    lazy var routes = RouteTable([
        Route(name: "auth", matches: { [unowned self] in identity?.handles(path: $0.path) == true }) { [unowned self] request, responder in
            answerAuth(request, responder: responder)
        },
        Route(name: "console", matches: { [unowned self] in console.isConsoleRequest($0) }) { [unowned self] request, responder throws(RESTError) in
            try console.serveConsole(request, responder: responder)
        },
        Route(name: "preflight", matches: { $0.method == .options }) { request, responder in
            responder.respond(RESTResponses.preflight(request))
        },
        Route(name: "long-poll", matches: { $0.path == "/.lp" }) { [unowned self] request, responder in
            longPolls.answer(request, responder: responder, now: clock()) { [unowned self] request, sink in openRealtime(request, sink: sink) }
        },
        Route(name: "metrics", matches: { $0.path == "/metrics" }) { [unowned self] request, responder throws(RESTError) in
            try serveMetrics(request, responder: responder)
        },
        Route(name: "hosting", matches: { [unowned self] in site != nil && StaticSite.serves($0) }) { [unowned self] request, responder in
            site?.answer(request, executor: executor, responder: responder)
        },
        Route(name: "database", matches: { _ in true }) { [unowned self] request, responder throws(RESTError) in
            try serveDatabase(request, responder: responder)
        },
    ])

    private func route(_ request: HTTPRequest, responder: any HTTPResponder) throws(RESTError) {
        guard let route = routes.route(for: request) else { throw RESTError(404, "Not found") }
        try route.respond(request, responder)
    }

    /// `/metrics`, for admins only: the numbers describe every namespace.
    private func serveMetrics(_ request: HTTPRequest, responder: any HTTPResponder) throws(RESTError) {
        var caller = try consoleCaller(request)
        if let credential = Self.credential(of: request, target: nil) {
            caller = try? credentials.caller(credential: credential, authVariable: nil).get()
        }
        guard caller?.isAdmin == true else { throw .permissionDenied }
        let endpoint = MetricsEndpoint(metrics: metrics, registry: namespaces, longPolls: longPolls.count, now: clock(), node: configuration.node,
            heapInUse: configuration.heapInUse)
        responder.respond(endpoint.response())
    }

    /// REST (§6–§8) and the server's own paths under the database's: `.settings/rules`, `.info`, `.inspect`.
    private func serveDatabase(_ request: HTTPRequest, responder: any HTTPResponder) throws(RESTError) {
        let target = try RESTTarget(path: request.path, queryItems: request.queryItems)
        var method = request.method
        if method == .post, let override = request.headers["x-http-method-override"] ?? target.methodOverride {
            switch override.uppercased() {
            case "PUT": method = .put
            case "PATCH": method = .patch
            case "DELETE": method = .delete
            case "GET": method = .get
            case "POST": break
            default: throw RESTError(400, "X-HTTP-Method-Override must be PUT, PATCH, DELETE or GET")
            }
        }
        let namespaceName = target.namespace ?? Self.namespace(fromHost: request.headers["host"])
            ?? configuration.defaultNamespace
        if target.path.first?.string == ".settings" {
            guard mayManageRules(request, target: target) else { throw .permissionDenied }
            if target.path.count >= 2 && (target.path.keys[1] == "hooks" || target.path.keys[1] == "functions") {
                return try serveHooks(request, method: method, target: target, namespace: namespaceName, responder: responder)
            }
            guard target.path == Path(".settings/rules") else { throw RESTError(404, "Not found") }
            let endpoint = RulesEndpoint(clock: clock, registry: namespaces)
            withNamespace(namespaceName, responder: responder) { namespace throws(RESTError) in
                try endpoint.serve(request, method: method, namespace: namespace, responder: responder)
            }
            return
        }
        if target.path.first?.string == ".info" {
            // Which node answered, for anyone (a Firebase client's own .info paths never reach a server).
            guard method == .get, target.path == Path(".info/node") || target.path == Path(".info") else { throw RESTError(404, "Not found") }
            let node = Node(configuration.node)
            let body = target.path.count == 1 ? Node(["node": node]).json() : node.json()
            responder.respond(RESTResponses.json(200, Array(body.utf8)))
            return
        }
        let caller = try caller(of: request, target: target)
        if target.path == Path(".history") {
            guard caller.isAdmin else { throw .permissionDenied }
            guard let executor else { throw RESTError(503, "The server is not running") }
            let endpoint = HistoryEndpoint(executor: executor, log: log)
            withNamespace(namespaceName, responder: responder) { namespace throws(RESTError) in
                try endpoint.serve(request, namespace: namespace, responder: responder)
            }
            return
        }
        if target.path == Path(".restore") {
            guard caller.isAdmin else { throw .permissionDenied }
            guard let executor else { throw RESTError(503, "The server is not running") }
            let endpoint = RestoreEndpoint(executor: executor, writes: writes, backups: backups) { [self] name, body in
                withNamespace(name, responder: responder, body)
            }
            withNamespace(namespaceName, responder: responder) { namespace throws(RESTError) in
                try endpoint.serve(request, namespace: namespace, responder: responder)
            }
            return
        }
        if target.path == Path(".feed") {
            guard caller.isAdmin else { throw .permissionDenied }
            guard let executor else { throw RESTError(503, "The server is not running") }
            let endpoint = FeedEndpoint(executor: executor, ids: subscriberIDs)
            withNamespace(namespaceName, responder: responder) { namespace throws(RESTError) in
                try endpoint.serve(request, namespace: namespace, responder: responder)
            }
            return
        }
        if target.path.first?.string == ".inspect" {
            guard target.path == Path(".inspect/databases") && method == .get else { throw RESTError(404, "Not found") }
            guard caller.isAdmin || configuration.emulator else { throw .permissionDenied }
            let names = namespaces.names.map { "{\"name\":\(Node($0).json())}" }.joined(separator: ",")
            responder.respond(RESTResponses.json(200, Array("[\(names)]".utf8)))
            return
        }
        // Loaded already (nearly always): served here, without making a closure for a load to call.
        if let namespace = namespaces[namespaceName] {
            return try rest.serve(request, method: method, target: target, caller: caller, namespace: namespace, responder: responder)
        }
        guard namespaces.mayOpen(namespaceName, isAdmin: caller.isAdmin) else {
            throw RESTError(NamespaceRegistry.noSuchNamespace(namespaceName))
        }
        let rest = rest
        withNamespace(namespaceName, responder: responder) { namespace throws(RESTError) in
            try rest.serve(request, method: method, target: target, caller: caller, namespace: namespace, responder: responder)
        }
    }

    /// Runs `body` once the namespace is loaded; its errors, and a namespace that cannot be served, are
    /// answered on `responder`.
    func withNamespace(
        _ name: String, responder: any HTTPResponder, _ body: @escaping (Namespace) throws(RESTError) -> Void
    ) {
        namespaces.withNamespace(name) { result in
            do throws(RESTError) {
                switch result {
                case .success(let namespace): try body(namespace)
                case .failure(let unavailable): throw RESTError(unavailable)
                }
            } catch {
                responder.respond(RESTResponses.error(error))
            }
        }
    }

    /// The namespace `name`, opened and loaded now (tests, and the CLI's small namespaces).
    func open(_ name: String) throws(NamespaceUnavailable) -> Namespace { try namespaces.open(name) }

    /// The first label of a Host with three or more labels, lower-cased (§1.2).
    static func namespace(fromHost host: String?) -> String? {
        guard var host else { return nil }
        if let colon = host.lastIndex(of: ":"), !host.contains("]") { host = String(host[..<colon]) }
        let labels = host.split(separator: ".")
        guard labels.count >= 3, !labels.allSatisfy({ $0.allSatisfy(\.isNumber) }) else { return nil }
        return labels[0].lowercased()
    }

    // MARK: Callers (docs/protocol.md §2.3, §6.2)

    /// Who a REST request acts as: its credential (`Authorization: Bearer`, `auth=`, `access_token=`)
    /// and, for an admin, `auth_variable_override`.
    private func caller(of request: HTTPRequest, target: RESTTarget) throws(RESTError) -> Caller {
        guard let credential = Self.credential(of: request, target: target) else { return try consoleCaller(request) ?? .signedOut }
        switch credentials.caller(credential: credential, authVariable: target.authVariableOverride) {
        case .success(let caller): return caller
        case .failure(let refusal) where refusal.revoked: throw RESTError(refusal)
        case .failure: throw RESTError(CredentialRefusal.unparsable)
        }
    }

    /// The admin, for a request with the console's cookie and its CSRF token; nil without the cookie,
    /// without the token or with the cookie of an ended session: then the request is signed out, as the
    /// same browser's other pages' requests are (a `--public` app's own reads of public data carry the
    /// cookie too). A wrong token is refused.
    func consoleCaller(_ request: HTTPRequest) throws(RESTError) -> Caller? {
        guard request.headers["cookie"] != nil, request.headers["x-hearth-csrf"] != nil else { return nil }
        switch console.consoleSession(of: request) {
        case .success(let found):
            var admin = Caller.admin
            admin.consoleSession = found.id
            return admin
        case .failure(.noSession): return nil
        case .failure(.csrf): throw Console.csrfRefusal
        }
    }

    /// The credential a REST request presents: `Authorization: Bearer`, else `auth=` / `access_token=`.
    static func credential(of request: HTTPRequest, target: RESTTarget?) -> String? {
        if let header = request.headers["authorization"] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]) }
        }
        return target?.credential
    }

    /// Who may read and replace a namespace's rules (§8.1): an admin; in emulator mode also a bearer of
    /// any credential that is not a user's ID token (firebase-admin for Node sends its own OAuth token
    /// there), but nobody without one.
    private func mayManageRules(_ request: HTTPRequest, target: RESTTarget) -> Bool {
        guard let credential = Self.credential(of: request, target: target) else { return (try? consoleCaller(request))??.isAdmin ?? false }
        if case .success(let caller) = credentials.caller(credential: credential, authVariable: nil), caller.isAdmin { return true }
        return configuration.emulator && Credentials.isNotAnIDToken(credential)
    }
}

/// The server's wall clock in milliseconds, shared by its parts; tests replace it.
final class ServerClock: @unchecked Sendable {
    // Read and replaced on the loop thread only (tests replace it before the loop starts).
    var read: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
}
