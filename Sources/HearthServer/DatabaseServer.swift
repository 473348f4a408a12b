import HearthCore
public import HearthProtocol
import HearthRules
public import HearthStorage
import Foundation
import HearthSupport

/// What the server serves and who may do what.
public struct ServerConfiguration: Sendable {
    /// Emulator mode: `Bearer owner` is admin and, until the rules issue lands, everyone may read and write.
    public var emulator: Bool
    /// The admin token of non-emulator mode (kept in the data directory, see `AdminToken`).
    public var adminToken: String?
    /// The namespace of requests with neither `?ns=` nor a three-label Host (§1.2).
    public var defaultNamespace: String
    /// Seconds between SSE `keep-alive` events (§6.7: about 30 s).
    public var keepAliveIntervalSeconds: Int

    public init(emulator: Bool, adminToken: String?, defaultNamespace: String, keepAliveIntervalSeconds: Int = 30) {
        self.emulator = emulator
        self.adminToken = adminToken
        self.defaultNamespace = defaultNamespace
        self.keepAliveIntervalSeconds = keepAliveIntervalSeconds
    }
}

/// Firebase's REST API and SSE streaming over any ``HTTPHandler`` transport (rtdb-protocol.md §6–§8).
///
/// Runs on the transport's event-loop thread: routing, reads and event fan-out happen there with no
/// locks of its own. Writes go to each namespace's ``DurableDatabase``, whose engine commits on the
/// storage thread; the completion comes back to the loop through the ``LoopExecutor`` and only then is
/// the client answered and are the streams told.
///
///     let server = DatabaseServer(configuration: .init(emulator: true, adminToken: nil, defaultNamespace: "demo"),
///                                 openEngine: { try SQLiteStorageEngine(directory: "hearth-data", namespace: $0) })
public final class DatabaseServer: HTTPHandler, @unchecked Sendable {
    public let configuration: ServerConfiguration
    private let openEngine: @Sendable (String) throws -> any StorageEngine
    /// Bytes a namespace's files hold before it is opened (0 when unknown): decides where it loads.
    private let namespaceBytes: (String) -> Int
    /// Namespaces loading off the loop thread, with what waits for each.
    private var loading: [String: [(Result<Namespace, RESTError>) -> Void]] = [:]
    private let rulesStore: RulesStore?
    /// Firebase Auth on the same port (see AuthRoutes.swift), and what verifies ID tokens; nil serves no
    /// auth endpoints and verifies no tokens (emulator mode still reads unsigned ones).
    public var identity: (any IdentityService)?
    // Loop-thread state.
    private var namespaces: [String: Namespace] = [:]
    /// The namespaces opened so far.
    var namespacesOpen: Dictionary<String, Namespace>.Values { namespaces.values }
    var executor: (any LoopExecutor)?
    /// Writes between their apply and their completion on the loop.
    let committingWrites = CommittingWrites()
    public var hasWritesCommitting: Bool { committingWrites.count > 0 }
    private var pushIDs = PushIDGenerator()
    var nextStreamID: UInt64 = 1
    /// Long-poll sessions (`/.lp`) by connection id.
    var longPolls: [String: LongPollConnection] = [:]
    private var lastKeepAlive: Int64 = 0
    /// Wall clock in milliseconds; replaceable in tests.
    public var clock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }

    public init(
        configuration: ServerConfiguration, rulesDirectory: String? = nil,
        namespaceBytes: @escaping (String) -> Int = { _ in 0 },
        openEngine: @escaping @Sendable (String) throws -> any StorageEngine
    ) {
        self.configuration = configuration
        self.openEngine = openEngine
        self.namespaceBytes = namespaceBytes
        rulesStore = rulesDirectory.map(RulesStore.init(directory:))
    }

    /// Namespaces opened so far.
    public var namespaceNames: [String] { namespaces.keys.sorted() }

    /// Closes every namespace's engine, waiting for queued commits. Call after the loop has stopped.
    public func close() {
        for namespace in namespaces.values { namespace.database.engine.close() }
        namespaces.removeAll()
    }

    // MARK: HTTPHandler

    public func loopStarted(executor: any LoopExecutor) {
        self.executor = executor
        lastKeepAlive = clock()
    }

    public func loopStopping() {
        for connection in Array(longPolls.values) { connection.end() }
        for namespace in namespaces.values {
            for stream in Array(namespace.streams.values) { stream.finish() }
        }
    }

    public func tick(nowMilliseconds: Int64) {
        tickLongPolls(now: nowMilliseconds)
        expireCredentials(now: nowMilliseconds)
        guard nowMilliseconds - lastKeepAlive >= Int64(configuration.keepAliveIntervalSeconds) * 1000 else { return }
        lastKeepAlive = nowMilliseconds
        for namespace in namespaces.values {
            var cutOff: [EventStream] = []
            for stream in namespace.streams.values where !stream.responder.send(SSE.keepAlive) {
                cutOff.append(stream)
            }
            for stream in cutOff { stream.disconnectSlowReader() }
        }
    }

    /// Firebase's error shape, `{"error": message}`, for requests the transport refuses.
    public func refusal(status: Int, message: String) -> HTTPResponse {
        Self.errorResponse(RESTError(status, message))
    }

    public func handle(_ request: HTTPRequest, responder: any HTTPResponder) {
        do {
            try route(request, responder: responder)
        } catch {
            responder.respond(Self.errorResponse(error))
        }
    }

    // MARK: Routing

    private func route(_ request: HTTPRequest, responder: any HTTPResponder) throws(RESTError) {
        if routeAuth(request, responder: responder) { return }
        if request.method == .options {
            responder.respond(preflight(request))
            return
        }
        if request.path == "/.lp" {
            longPoll(request, responder: responder)
            return
        }
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
            try settings(request, method: method, target: target, namespaceName: namespaceName, responder: responder)
            return
        }
        let caller = try caller(of: request, target: target)

        if target.path.first?.string == ".inspect" {
            guard target.path == Path(".inspect/databases") && method == .get else {
                throw RESTError(404, "Not found")
            }
            guard caller.isAdmin || configuration.emulator else { throw .permissionDenied }
            let names = namespaces.keys.sorted().map { "{\"name\":\(Node($0).json())}" }.joined(separator: ",")
            responder.respond(Self.jsonResponse(200, Array("[\(names)]".utf8)))
            return
        }
        // Loaded already (nearly always): served here, without making a closure for a load to call.
        if let namespace = namespaces[namespaceName] {
            return try serve(request, method: method, target: target, caller: caller, namespace: namespace, responder: responder)
        }
        guard mayOpen(namespaceName, isAdmin: caller.isAdmin) else { throw Self.noSuchNamespace(namespaceName) }
        withNamespace(namespaceName, responder: responder) { [self] namespace throws(RESTError) in
            try serve(request, method: method, target: target, caller: caller, namespace: namespace, responder: responder)
        }
    }

    /// Whether a request may open `name`: any namespace in emulator mode (created on first use, as the
    /// emulator does); otherwise one that exists, unless an admin creates it. Strangers cannot make the
    /// server create databases (disk, file descriptors) by naming them.
    func mayOpen(_ name: String, isAdmin: Bool) -> Bool {
        configuration.emulator || isAdmin || namespaces[name] != nil || loading[name] != nil || namespaceBytes(name) > 0
    }

    /// Firebase's answer for a database that does not exist, with what to do about it.
    static func noSuchNamespace(_ name: String) -> RESTError {
        RESTError(404, "Firebase error. Please ensure that you spelled the name of your Firebase correctly "
            + "(namespace '\(name)' does not exist; an admin creates it, e.g. with hearth rules deploy \(name) RULES)")
    }

    /// A data request on its loaded namespace.
    private func serve(
        _ request: HTTPRequest, method: HTTPRequest.Method, target: RESTTarget, caller: Caller, namespace: Namespace,
        responder: any HTTPResponder
    ) throws(RESTError) {
        switch method {
        case .get, .head:
            guard namespace.mayRead(caller, at: target.path, query: target.query, now: clock()) else {
                throw .permissionDenied
            }
            if request.headers["accept"]?.contains("text/event-stream") == true {
                try stream(request, target: target, caller: caller, namespace: namespace, responder: responder)
            } else {
                try get(request, target: target, namespace: namespace, responder: responder)
            }
        case .put:
            let value = try Self.parseBody(request.body, at: target.path)
            let ifHash = try etagCondition(request)
            write(.set(target.path), caller: caller, namespace: namespace, target: target, request: request, responder: responder) {
                db, now, check, completion in
                let check = namespace.compareAndSetCheck(check, caller: caller, at: target.path, ifHash: ifHash, now: now)
                db.set(target.path, to: value, ifHash: ifHash, now: now, check: check, completion: completion)
            }
        case .post:
            let id = pushIDs.next(now: clock())
            let path = target.path.appending(ChildKey(id))
            let value = try Self.parseBody(request.body, at: path)
            let ifHash = try etagCondition(request)
            write(.set(path), caller: caller, namespace: namespace, target: target, request: request, responder: responder,
                  reply: { _ in Array("{\"name\":\(Node(id).json())}".utf8) }) { db, now, check, completion in
                let check = namespace.compareAndSetCheck(check, caller: caller, at: path, ifHash: ifHash, now: now)
                db.set(path, to: value, ifHash: ifHash, now: now, check: check, completion: completion)
            }
        case .patch:
            let values = try Self.parseUpdate(request.body, at: target.path)
            if try etagCondition(request) != nil {
                throw RESTError(400, "if-match is supported on PUT, POST and DELETE, not on multi-path PATCH")
            }
            let keys = values.map(\.0)
            write(.update(target.path, keys), caller: caller, namespace: namespace, target: target, request: request,
                  responder: responder,
                  reply: { root in
                      var data: [UInt8] = [UInt8(ascii: "{")]
                      for (index, key) in keys.enumerated() {
                          if index > 0 { data.append(UInt8(ascii: ",")) }
                          Node(key.description).appendJSON(to: &data)
                          data.append(UInt8(ascii: ":"))
                          root.child(at: target.path.appending(path: key)).appendJSON(to: &data, format: Self.format(target))
                      }
                      data.append(UInt8(ascii: "}"))
                      return data
                  }) { db, now, check, completion in
                db.update(target.path, with: values, now: now, check: check, completion: completion)
            }
        case .delete:
            let ifHash = try etagCondition(request)
            write(.set(target.path), caller: caller, namespace: namespace, target: target, request: request, responder: responder) {
                db, now, check, completion in
                let check = namespace.compareAndSetCheck(check, caller: caller, at: target.path, ifHash: ifHash, now: now)
                db.set(target.path, to: .empty, ifHash: ifHash, now: now, check: check, completion: completion)
            }
        case .options:
            responder.respond(preflight(request))
        }
    }

    /// The first label of a Host with three or more labels, lower-cased (§1.2).
    static func namespace(fromHost host: String?) -> String? {
        guard var host else { return nil }
        if let colon = host.lastIndex(of: ":"), !host.contains("]") { host = String(host[..<colon]) }
        let labels = host.split(separator: ".")
        guard labels.count >= 3, !labels.allSatisfy({ $0.allSatisfy(\.isNumber) }) else { return nil }
        return labels[0].lowercased()
    }

    /// The namespace `name`, opened and loaded here and now (tests, and namespaces too small to matter).
    func open(_ name: String) throws(RESTError) -> Namespace {
        if let namespace = namespaces[name] { return namespace }
        let result = Self.openAndLoad(name, openEngine)
        return try adopt(name, result).get()
    }

    /// Runs `body` with the namespace once it is loaded: at once when it is, else when its load is done.
    /// A namespace whose files hold more than ``backgroundLoadBytesMin`` loads on its own thread, so the
    /// loop keeps serving everyone else meanwhile (a 300 MB database takes seconds); requests for it wait.
    /// Errors `body` throws, and a namespace that cannot be opened, are answered on `responder`.
    func withNamespace(
        _ name: String, responder: any HTTPResponder, _ body: @escaping (Namespace) throws(RESTError) -> Void
    ) {
        withNamespace(name) { result in
            do throws(RESTError) { try body(result.get()) } catch { responder.respond(Self.errorResponse(error)) }
        }
    }

    func withNamespace(_ name: String, _ body: @escaping (Result<Namespace, RESTError>) -> Void) {
        if let namespace = namespaces[name] { return body(.success(namespace)) }
        if loading[name] != nil { return loading[name]!.append(body) }
        guard let executor, namespaceBytes(name) > Self.backgroundLoadBytesMin else {
            return body(adopt(name, Self.openAndLoad(name, openEngine)))
        }
        loading[name] = [body]
        FileHandle.standardError.write(Data("hearth: loading namespace '\(name)' (\(namespaceBytes(name) >> 20) MB)…\n".utf8))
        let openEngine = openEngine
        let thread = Thread {
            let result = Self.openAndLoad(name, openEngine)
            executor.execute { [self] in
                let adopted = adopt(name, result)
                if case .success = adopted {
                    FileHandle.standardError.write(Data("hearth: namespace '\(name)' loaded.\n".utf8))
                }
                for waiter in loading.removeValue(forKey: name) ?? [] { waiter(adopted) }
            }
        }
        thread.name = "hearth.load.\(name)"
        thread.start()
    }

    /// Database files smaller than this load on the loop thread (a few milliseconds).
    static let backgroundLoadBytesMin = 4 << 20

    /// Opens the engine and loads the tree: any thread.
    private static func openAndLoad(
        _ name: String, _ openEngine: (String) throws -> any StorageEngine
    ) -> Result<(any StorageEngine, Node), RESTError> {
        do {
            let engine = try openEngine(name)
            return .success((engine, try engine.load(progress: nil)))
        } catch let error as StorageError where error.code == .invalidData {
            return .failure(RESTError(400, "Invalid namespace '\(name)': use 1–63 letters, digits or hyphens"))
        } catch {
            return .failure(RESTError(500, "Could not open the database '\(name)': \(error)"))
        }
    }

    /// Finishes a namespace's durable writes on the loop (see `DurableDatabase.init(engine:root:finishOn:)`):
    /// their completions answer writers and tell listeners there anyway.
    private var finisher: DurableDatabase.Finisher? {
        guard let executor else { return nil }
        return { executor.execute($0) }
    }

    /// Makes a loaded engine and tree the namespace `name` (loop thread).
    private func adopt(_ name: String, _ loaded: Result<(any StorageEngine, Node), RESTError>) -> Result<Namespace, RESTError> {
        loaded.map { engine, root in
            if let existing = namespaces[name] { return existing }
            let stored = storedRules(name)
            let namespace = Namespace(
                name: name, database: DurableDatabase(engine: engine, root: root, finishOn: finisher), rules: stored.rules,
                rulesDeployed: stored.deployed)
            namespaces[name] = namespace
            return namespace
        }
    }

    /// The rules uploaded for `name`, else the mode's default (open in emulator mode, locked otherwise).
    /// Stored rules that no longer compile leave the namespace locked, with the reason printed.
    private func storedRules(_ name: String) -> (rules: RuleSet, deployed: Bool) {
        guard let source = rulesStore?.load(name) else { return (Self.defaultRules(emulator: configuration.emulator), false) }
        do { return (try RuleSet(source: source), true) } catch {
            FileHandle.standardError.write(Data(
                "hearth: the stored rules of '\(name)' do not compile (\(error)); it stays locked until new rules are deployed\n".utf8))
            return (.locked, true)
        }
    }

    // MARK: Callers (rtdb-protocol.md §2.3, §6.2)

    /// Who a REST request acts as: its credential (`Authorization: Bearer`, `auth=`, `access_token=`)
    /// and, for an admin, `auth_variable_override`.
    private func caller(of request: HTTPRequest, target: RESTTarget) throws(RESTError) -> Caller {
        guard let credential = Self.credential(of: request, target: target) else { return .signedOut }
        switch caller(credential: credential, authVariable: target.authVariableOverride) {
        case .success(let caller): return caller
        case .failure(let failure) where failure.revoked: throw RESTError(401, failure.message)
        case .failure: throw RESTError(401, "Could not parse auth token.")
        }
    }

    /// The credential a REST request presents: `Authorization: Bearer`, else `auth=` / `access_token=`.
    static func credential(of request: HTTPRequest, target: RESTTarget) -> String? {
        if let header = request.headers["authorization"] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]) }
        }
        return target.credential
    }

    /// Who may read and replace a namespace's rules (§8.1): an admin; in emulator mode also a bearer of
    /// any credential that is not a user's ID token (firebase-admin for Node sends its own OAuth token
    /// there), but nobody without one.
    private func mayManageRules(_ request: HTTPRequest, target: RESTTarget) -> Bool {
        guard let credential = Self.credential(of: request, target: target) else { return false }
        if case .success(let caller) = caller(credential: credential, authVariable: nil), caller.isAdmin { return true }
        return configuration.emulator && Self.unverifiedClaims(credential) == nil
    }

    /// What a credential makes its bearer. An admin credential with an auth variable acts as that user
    /// (`auth_variable_override`, or realtime `authvar`; JSON null: signed out).
    func caller(credential: String, authVariable: Node?) -> Result<Caller, RealtimeAuthFailure> {
        let isOwner = configuration.emulator && credential == "owner"
        let isAdminToken = configuration.adminToken.map { ConstantTime.equal($0, credential) } ?? false
        if isOwner || isAdminToken {
            guard let authVariable else { return .success(.admin) }
            return .success(Caller(isAdmin: false, auth: authVariable.isEmpty ? nil : authVariable))
        }
        if let identity {
            switch identity.verifyIDToken(credential) {
            case .success(let verified):
                // The emulator's unsigned tokens never expire (their `iat` is usually 0) and speak for no
                // account; a signed token is good only while its account accepts it.
                let signed = !(credential.split(separator: ".", omittingEmptySubsequences: false).last?.isEmpty ?? true)
                guard !signed || identity.accountAllows(uid: verified.uid, issuedAt: verified.issuedAt) else {
                    return .failure(RealtimeAuthFailure(status: .invalidToken, message: Self.revokedTokenMessage, revoked: true))
                }
                return .success(Caller(
                    isAdmin: false, auth: verified.auth, expiresAt: signed ? verified.expiresAt * 1000 : nil,
                    account: signed ? (verified.uid, verified.issuedAt) : nil))
            case .failure(.malformed):
                // A token whose claims no verifier reads (times out of range, not a JWT) is
                // refused in every mode: the emulator's leniency is about signatures and audiences.
                return .failure(RealtimeAuthFailure(status: .invalidToken, message: "Could not parse auth token."))
            case .failure(let refusal):
                if !configuration.emulator {
                    return .failure(refusal == .expired
                        ? RealtimeAuthFailure(status: .expiredToken, message: "Auth token is expired.")
                        : RealtimeAuthFailure(status: .invalidToken, message: "Could not verify the auth token."))
                }
            }
        }
        guard configuration.emulator else {
            return .failure(RealtimeAuthFailure(status: .invalidToken, message: "Could not verify the auth token."))
        }
        // Emulator mode: unsigned (or unverified) JWTs are accepted without signature or expiry checks.
        guard let claims = Self.unverifiedClaims(credential) else {
            return .failure(RealtimeAuthFailure(status: .invalidToken, message: "Could not parse auth token."))
        }
        return .success(Caller(isAdmin: false, auth: AuthVariable.from(claims: claims)))
    }

    static let revokedTokenMessage =
        "The auth token was revoked: its account was disabled or deleted, or its password changed. Sign in again."

    /// The payload of a JWT, unchecked.
    static func unverifiedClaims(_ token: String) -> Node? { CompactJWT.claims(token) }


    // MARK: Rules storage (§8.1)

    private func settings(
        _ request: HTTPRequest, method: HTTPRequest.Method, target: RESTTarget, namespaceName: String,
        responder: any HTTPResponder
    ) throws(RESTError) {
        guard target.path == Path(".settings/rules") else { throw RESTError(404, "Not found") }
        withNamespace(namespaceName, responder: responder) { [self] namespace throws(RESTError) in
            try rulesSettings(request, method: method, namespace: namespace, responder: responder)
        }
    }

    private func rulesSettings(
        _ request: HTTPRequest, method: HTTPRequest.Method, namespace: Namespace, responder: any HTTPResponder
    ) throws(RESTError) {
        switch method {
        case .get, .head:
            let source = namespace.rules.source
            let strict = request.queryItems.contains { $0.name == "format" && $0.value == "strict" }
            if strict {
                guard let node = try? Node(json: RulesText.stripComments(source)) else {
                    throw RESTError(500, "The stored rules are not valid JSON")
                }
                responder.respond(Self.jsonResponse(200, Array(node.json(.export).utf8)))
            } else {
                responder.respond(Self.jsonResponse(200, Array(source.utf8)))
            }
        case .put:
            let source = String(decoding: request.body, as: UTF8.self)
            let rules: RuleSet
            do { rules = try RuleSet(source: source) } catch {
                // firebase-tools prints this string and expects the line in it (§8.1).
                throw RESTError(400, "Error saving rules - Line \(error.line), column \(error.column): \(error.message)")
            }
            do { try rulesStore?.save(source, for: namespace.name) } catch {
                throw RESTError(500, "Could not store the rules: \(error)")
            }
            // Stored before they apply: no decision is made under rules a restart would not bring back.
            namespace.replaceRules(rules, now: clock())
            responder.respond(Self.jsonResponse(200, Array(#"{"status":"ok"}"#.utf8)))
        default:
            throw RESTError(405, "Rules are read with GET and replaced with PUT")
        }
    }

    /// A namespace's rules until some are deployed: open in emulator mode (as Firebase's emulator),
    /// locked otherwise (as a new Firebase project in locked mode).
    static func defaultRules(emulator: Bool) -> RuleSet {
        let source = emulator
            ? "{\n  \"rules\": {\n    \".read\": true,\n    \".write\": true\n  }\n}\n"
            : "{\n  \"rules\": {\n    \".read\": false,\n    \".write\": false\n  }\n}\n"
        do { return try RuleSet(source: source) } catch { preconditionFailure("default rules do not compile: \(error)") }
    }

    // MARK: Reads

    static func format(_ target: RESTTarget) -> JSONFormat {
        let base: JSONFormat = target.exportFormat ? .export : .rest
        return target.print == .pretty ? .pretty(base) : base
    }

    static func etag(of node: Node) -> String { node.isEmpty ? "null_etag" : node.hash }

    static func wantsETag(_ request: HTTPRequest) -> Bool {
        request.headers["x-firebase-etag"]?.lowercased() == "true" || request.headers["if-match"] != nil
            || request.headers["if-none-match"] != nil
    }

    /// `if-match` as the tree's `ifHash` (`null_etag` = absent = the empty hash).
    private func etagCondition(_ request: HTTPRequest) throws(RESTError) -> String? {
        guard var tag = request.headers["if-match"]?.trimmingCharacters(in: .whitespaces) else { return nil }
        if tag.hasPrefix("W/") { tag.removeFirst(2) }
        if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = String(tag.dropFirst().dropLast()) }
        return tag == "null_etag" ? "" : tag
    }

    private func get(_ request: HTTPRequest, target: RESTTarget, namespace: Namespace, responder: any HTTPResponder)
        throws(RESTError)
    {
        if Self.wantsETag(request) && (target.shallow || target.query != nil) {
            throw RESTError(400, "ETags cannot be combined with shallow or query parameters")
        }
        if let query = target.query { namespace.prepareIndex(for: query, at: target.path) }
        let value: Node = namespace.database.read { tree in
            if let query = target.query {
                let entries = tree.window(at: target.path, params: query)
                if entries.isEmpty { return tree.value(at: target.path).hasChildren ? Node(children: ChildrenMap()) : .empty }
                var children = entries.map { (key: $0.key, value: $0.node) }
                children.sort { $0.key < $1.key }
                return Node(children: ChildrenMap(sortedUniqueElements: children))
            }
            return tree.value(at: target.path)
        }
        var headers: [(String, String)] = []
        if Self.wantsETag(request) {
            let tag = Self.etag(of: value)
            headers.append(("etag", tag))
            if let expected = request.headers["if-none-match"], expected == tag {
                responder.respond(Self.withCommonHeaders(HTTPResponse(status: 304, headers: headers)))
                return
            }
        }
        if target.print == .silent {
            responder.respond(Self.withCommonHeaders(HTTPResponse(status: 204, headers: headers)))
            return
        }
        var body: [UInt8] = []
        if target.shallow {
            Self.shallow(value).appendJSON(to: &body, format: Self.format(target))
        } else if value.isEmpty && target.query != nil && namespace.database.read({ $0.value(at: target.path).hasChildren }) {
            body = Array("{}".utf8)
        } else {
            value.appendJSON(to: &body, format: Self.format(target))
        }
        var contentType = "application/json; charset=utf-8"
        if let callback = target.callback {
            guard callback.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "$" }) else {
                throw RESTError(400, "callback must be a JavaScript function name")
            }
            body = Array("\(callback)(".utf8) + body + Array(");".utf8)
            contentType = "application/javascript; charset=utf-8"
        }
        if let download = target.download {
            let safe = download.filter { $0 != "\"" && $0 != "\r" && $0 != "\n" }
            headers.append(("content-disposition", "attachment; filename=\"\(safe)\""))
        }
        headers.insert(("content-type", contentType), at: 0)
        responder.respond(Self.withCommonHeaders(HTTPResponse(status: 200, headers: headers, body: body)))
    }

    /// `shallow=true`: the children's keys, each with `true` for an object and its own value for a
    /// primitive (`{"a": {"deep": 1}, "b": 2}` reads `{"a": true, "b": 2}`), as Firebase answers.
    static func shallow(_ value: Node) -> Node {
        guard value.hasChildren else { return value }
        var children: [(key: ChildKey, value: Node)] = []
        value.children.forEach { key, child in
            children.append((key, child.hasChildren ? Node(true) : child))
            return true
        }
        return Node(children: ChildrenMap(sortedUniqueElements: children))
    }

    // MARK: Streams

    private func stream(
        _ request: HTTPRequest, target: RESTTarget, caller: Caller, namespace: Namespace, responder: any HTTPResponder
    ) throws(RESTError) {
        if target.shallow { throw RESTError(400, "shallow cannot be combined with streaming") }
        let params = target.query.flatMap { $0.loadsAllData ? nil : $0 }
        if let params { namespace.prepareIndex(for: params, at: target.path) }
        let id = nextStreamID
        nextStreamID += 1
        var value = namespace.database.read { $0.value(at: target.path) }
        if let params { value = QueryWindow.node(of: value, params: params) }
        let stream = EventStream(
            id: id, path: target.path, exportFormat: target.exportFormat, caller: caller, params: params,
            initialWindow: params == nil ? .empty : value, responder: responder, namespace: namespace)
        namespace.addStream(stream)
        responder.onClose = { [weak namespace, weak stream] in
            if let stream { namespace?.removeStream(stream) }
        }
        responder.startStream(
            status: 200,
            headers: Self.commonHeaders + [("content-type", "text/event-stream; charset=utf-8")])
        let initial = SSE.event("put", path: .root, data: value, format: target.exportFormat ? .export : .rest)
        if !responder.send(initial) { stream.disconnectSlowReader() }
    }

    // MARK: Writes

    typealias Completion = @Sendable (Result<DurableDatabase.CommittedWrite, any Error>) -> Void

    /// Runs `apply` against the namespace, then, on the loop, answers the writer and tells the streams.
    private func write(
        _ kind: Write, caller: Caller, namespace: Namespace, target: RESTTarget, request: HTTPRequest,
        responder: any HTTPResponder, reply: ((Node) -> [UInt8])? = nil,
        _ apply: (DurableDatabase, Int64, DurableDatabase.WriteCheck?, @escaping Completion) -> Void
    ) {
        let wantsETag = Self.wantsETag(request)
        guard let executor else { return }
        let path: Path
        switch kind {
        case .set(let written): path = written
        case .update(let written, _): path = written
        }
        let pending = PendingWrite(
            server: self, namespace: namespace, responder: responder, reply: reply, kind: kind, path: path,
            target: target, wantsETag: wantsETag, caller: caller)
        applyWrite(caller: caller, namespace: namespace, executor: executor, apply) { pending.finish($0) }
    }

    /// Runs `apply` on the namespace's database with the caller's write check, then `finished` with its
    /// result on the loop; the write counts as committing until then (``hasWritesCommitting``).
    func applyWrite(
        caller: Caller, namespace: Namespace, executor: any LoopExecutor,
        _ apply: (DurableDatabase, Int64, DurableDatabase.WriteCheck?, @escaping Completion) -> Void,
        finished: @escaping @Sendable (Result<DurableDatabase.CommittedWrite, any Error>) -> Void
    ) {
        let now = clock()
        let database = namespace.database, committing = committingWrites
        committing.started()
        apply(database, now, namespace.writeCheck(caller, now: now)) { result in
            // Namespaces opened by the server finish their writes on the loop already.
            let work: @Sendable () -> Void = {
                committing.finished()
                finished(result)
            }
            if database.finisher != nil { work() } else { executor.execute(work) }
        }
    }

    /// A write waiting for its commit: everything needed to answer it, handed back to the loop.
    final class PendingWrite: @unchecked Sendable {
        // Touched only on the loop thread (the completion only carries the object there).
        let server: DatabaseServer
        let namespace: Namespace
        let responder: any HTTPResponder
        let reply: ((Node) -> [UInt8])?
        let kind: Write
        let path: Path
        let target: RESTTarget
        let wantsETag: Bool
        let caller: Caller

        init(
            server: DatabaseServer, namespace: Namespace, responder: any HTTPResponder, reply: ((Node) -> [UInt8])?,
            kind: Write, path: Path, target: RESTTarget, wantsETag: Bool, caller: Caller
        ) {
            self.caller = caller
            self.server = server
            self.namespace = namespace
            self.responder = responder
            self.reply = reply
            self.kind = kind
            self.path = path
            self.target = target
            self.wantsETag = wantsETag
        }

        func finish(_ result: Result<DurableDatabase.CommittedWrite, any Error>) {
            switch result {
            case .success(let committed):
                namespace.publish(CommittedChange(write: kind, root: committed.root, changes: committed.changes))
                server.answerWrite(committed.root, path: path, target: target, wantsETag: wantsETag,
                                   responder: responder, reply: reply)
            case .failure(let error as DataError) where error.code == .hashMismatch:
                server.answerPreconditionFailed(
                    namespace: namespace, path: path, target: target, caller: caller, responder: responder)
            case .failure(is PermissionDenied):
                responder.respond(DatabaseServer.errorResponse(RESTError.permissionDenied))
            case .failure(let error):
                responder.respond(DatabaseServer.errorResponse(error))
            }
        }
    }

    private func answerWrite(
        _ root: Node, path: Path, target: RESTTarget, wantsETag: Bool, responder: any HTTPResponder,
        reply: ((Node) -> [UInt8])?
    ) {
        var headers: [(String, String)] = []
        if wantsETag { headers.append(("etag", Self.etag(of: root.child(at: path)))) }
        if target.print == .silent {
            responder.respond(Self.withCommonHeaders(HTTPResponse(status: 204, headers: headers)))
            return
        }
        var body: [UInt8]
        if let reply {
            body = reply(root)
        } else {
            body = []
            root.child(at: path).appendJSON(to: &body, format: Self.format(target))
        }
        responder.respond(Self.jsonResponse(200, body, headers: headers))
    }

    /// 412 with the current value and its ETag (§6.5), once every write queued before has committed, so
    /// the value shown is durable and includes whatever made the condition fail.
    private func answerPreconditionFailed(
        namespace: Namespace, path: Path, target: RESTTarget, caller: Caller, responder: any HTTPResponder
    ) {
        // The current value and its ETag are a read: only for callers the rules let read it.
        guard namespace.mayRead(caller, at: path, query: nil, now: clock()) else {
            return responder.respond(Self.errorResponse(RESTError.permissionDenied))
        }
        let pending = PendingWrite(
            server: self, namespace: namespace, responder: responder, reply: nil, kind: .set(path), path: path,
            target: target, wantsETag: true, caller: caller)
        guard let executor else { return }
        namespace.database.engine.append(WriteBatch(operations: [])) { _ in
            executor.execute {
                let namespace = pending.namespace, responder = pending.responder
                let value = namespace.database.read { $0.value(at: path) }
                var body: [UInt8] = []
                value.appendJSON(to: &body, format: Self.format(target))
                responder.respond(Self.jsonResponse(412, body, headers: [("etag", Self.etag(of: value))]))
            }
        }
    }

    // MARK: Bodies

    static func parseBody(_ body: [UInt8], at path: Path) throws(RESTError) -> Node {
        guard !body.isEmpty else { throw RESTError(400, "Request body is missing: send JSON data") }
        do {
            return try Node(jsonBytes: body, options: .init(validation: .write(at: path)))
        } catch {
            throw RESTError(400, error.code == .invalidJSON ? "Invalid data; couldn't parse JSON object, array, or value." : error.message)
        }
    }

    static func parseUpdate(_ body: [UInt8], at path: Path) throws(RESTError) -> [(Path, Node)] {
        guard !body.isEmpty else { throw RESTError(400, "Request body is missing: send a JSON object") }
        guard let entries = JSONObjectSplitter.split(body) else {
            if (try? Node(jsonBytes: body)) != nil {
                throw RESTError(400, "Invalid data; PATCH needs a JSON object of paths to values.")
            }
            throw RESTError(400, "Invalid data; couldn't parse JSON object, array, or value.")
        }
        var values: [(Path, Node)] = []
        for (key, raw) in entries {
            let relative = Path(key)
            guard !relative.isRoot else { throw RESTError(400, "Invalid key in PATCH: '\(key)'") }
            let full = path.appending(path: relative)
            do {
                try KeyValidation.validate(writePath: full)
                let value = try Node(jsonBytes: Array(raw), options: .init(validation: .write(at: full)))
                values.append((relative, value))
            } catch {
                throw RESTError(400, error.code == .invalidJSON ? "Invalid data; couldn't parse JSON object, array, or value." : error.message)
            }
        }
        for (index, (a, _)) in values.enumerated() {
            for (b, _) in values[(index + 1)...] where a.overlaps(b) {
                throw RESTError(400, "Invalid data; paths '\(a)' and '\(b)' overlap in one update")
            }
        }
        return values
    }

    // MARK: Responses

    /// Sent on every response: browsers call the REST API cross-origin (§6.1), and JSON must never be
    /// sniffed as HTML.
    static let commonHeaders: [(String, String)] = [
        ("access-control-allow-origin", "*"),
        ("x-content-type-options", "nosniff"),
        ("cache-control", "no-cache"),
        ("strict-transport-security", "max-age=31556926; includeSubDomains; preload"),
    ]

    static func withCommonHeaders(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers += commonHeaders.filter { name, _ in !response.headers.contains { $0.0 == name } }
        return response
    }

    static func jsonResponse(_ status: Int, _ body: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        withCommonHeaders(HTTPResponse(
            status: status, headers: [("content-type", "application/json; charset=utf-8")] + headers, body: body))
    }

    static func errorResponse(_ error: any Error) -> HTTPResponse {
        let rest: RESTError
        switch error {
        case let error as RESTError: rest = error
        case let error as DataError: rest = RESTError(400, error.message)
        case let error as StorageError: rest = RESTError(500, error.message)
        default: rest = RESTError(500, "Internal error")
        }
        var response = jsonResponse(rest.status, Array("{\"error\":\(Node(rest.message).json())}".utf8))
        if rest.closesConnection { response.headers.append(("connection", "close")) }
        return response
    }

    private func preflight(_ request: HTTPRequest) -> HTTPResponse {
        let allowHeaders = request.headers["access-control-request-headers"]
            ?? "authorization, content-type, x-firebase-etag, if-match, if-none-match, x-http-method-override"
        return HTTPResponse(status: 204, headers: Self.commonHeaders + [
            ("access-control-allow-methods", "GET, PUT, POST, PATCH, DELETE, OPTIONS"),
            ("access-control-allow-headers", allowHeaders),
            ("access-control-max-age", "86400"),
        ])
    }
}
