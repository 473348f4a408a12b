import Foundation
import HearthCore
import HearthOutbound
public import HearthProtocol
public import HearthServer
import HearthStorage
import HearthSupport
import HearthTriggers

/// Webhooks for `hearth serve` (docs/functions.md): keeps each namespace's hooks document in
/// `hooks.sqlite`, runs one ``HookWorker`` per hook, and answers the admin endpoints
/// (`/.settings/hooks.json`, `hooks/status`, `hooks/log`, `hooks/dead`, `hooks/redeliver`); and keeps what
/// the server holds for functions processes (`/.settings/functions…`, FunctionEndpoints.swift).
public final class HookDeliveryService: HookService, @unchecked Sendable {  // mutable state in `state`
    let store: any HookStorage
    let consumers: any FunctionConsumerStorage
    let settings: HookSettings
    private struct State {
        var host: (any TriggerHost)?
        /// Running workers by namespace, then hook name.
        var workers: [String: [String: HookWorker]] = [:]
        /// What each namespace was last activated with (its document and its processes' patterns), and
        /// the feed's head then: where a hook taken over without a cursor starts.
        var activated: [String: (signature: String, head: Int64)] = [:]
        var stopped = false
    }
    private let state = Locked(State())
    /// Deploys, registrations and start-up activation, one at a time, off the loop.
    let queue = DispatchQueue(label: "hearth.hooks")

    /// A single node's: opens (creating) `hooks.sqlite` in `directory`.
    public convenience init(directory: String, settings: HookSettings) throws {
        let store = try SQLiteHookStore(path: directory + "/hooks.sqlite")
        // A crash (not a power loss) loses nothing in WAL mode with NORMAL; cursors are saved often, and
        // what a lost save would replay is delivered again with the same ids.
        try store.database.executeScript("PRAGMA synchronous=NORMAL;")
        self.init(store: store, consumers: try SQLiteFunctionConsumerStore(database: store.database), settings: settings)
    }

    /// Over any storage: a cluster's shared one makes every node follow the others' deploys and
    /// registrations, and deliver only the hooks it holds (``HookStorage/claim(_:_:)``).
    public init(store: any HookStorage, consumers: any FunctionConsumerStorage, settings: HookSettings) {
        self.store = store
        self.consumers = consumers
        self.settings = settings
    }

    public func start(host: any TriggerHost) {
        state.withLock { $0.host = host }
        queue.async { [self] in
            var documents: [String: HooksDocument] = [:]
            do {
                for (namespace, document) in try store.documents() { documents[namespace] = document }
                // A namespace with only functions processes still keeps the earlier values they need
                // while they are away.
                for consumer in try consumers.consumers(nil) where documents[consumer.namespace] == nil { documents[consumer.namespace] = HooksDocument() }
            } catch {
                return settings.log("hearth: webhooks are not delivered: their store could not be read: \(error)")
            }
            for (namespace, document) in documents.sorted(by: { $0.key < $1.key }) {
                if case .failure(let error) = activate(document, in: namespace) {
                    settings.log("hearth: the triggers of '\(namespace)' are not running: \(error.message)")
                }
            }
            if store.isShared { scheduleReconcile() }
        }
    }

    public func stop() {
        let workers = state.withLock { state in
            state.stopped = true
            return state.workers.values.flatMap(\.values)
        }
        for worker in workers {
            worker.stop(waitingSeconds: 2)
            // Another node may take it at once rather than when this node's lease lapses.
            store.release(worker.namespace, worker.hook.name)
        }
        queue.sync {}
    }

    // MARK: Running hooks

    /// Makes `document` the running hooks of `namespace`: the namespace's writes keep what its patterns
    /// and its functions processes' need (and `extraPatterns`: those of a process about to be registered),
    /// workers of removed or changed hooks stop (saving their cursors),
    /// new ones start at the feed's head and changed ones where they were. Waits for all that (on
    /// `queue`), and answers the head.
    func activate(_ document: HooksDocument, in namespace: String, adding extraPatterns: [TriggerPattern] = []) -> Result<Int64, StorageError> {
        guard let host = state.withLock({ $0.stopped ? nil : $0.host }) else { return .failure(StorageError(.closed, "the server is stopping")) }
        let running = state.withLock { $0.workers[namespace] ?? [:] }
        for (name, worker) in running where document.hooks.first(where: { $0.name == name }) != worker.hook {
            worker.stop(waitingSeconds: Double(worker.hook.timeoutSeconds) + 1)
            state.withLock { _ = $0.workers[namespace]?.removeValue(forKey: name) }
        }
        let head = Locked<Result<Int64, StorageError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let functionPatterns: [TriggerPattern]
        do { functionPatterns = try consumers.consumers(namespace).flatMap(\.patterns) + extraPatterns } catch {
            return .failure(StorageError(.io, "the functions processes of '\(namespace)' could not be read: \(error)"))
        }
        let patterns = TriggerPatterns(document.hooks.map(\.pattern) + functionPatterns)
        host.watch(namespace: namespace, patterns: patterns, woken: { [weak self] in self?.wake(namespace) }) { result in
            head.withLock { $0 = result }
            ready.signal()
        }
        guard ready.wait(timeout: .now() + 60) == .success, let answered = head.withLock({ $0 }) else {
            return .failure(StorageError(.io, "the namespace did not answer within 60 s"))
        }
        guard case .success(let position) = answered else {
            if case .failure(let error) = answered { return .failure(error) }
            return .failure(StorageError(.io, "the namespace did not answer"))
        }
        let signature = Self.signature(document, functionPatterns)
        state.withLock { $0.activated[namespace] = (signature, position) }
        for hook in document.hooks where state.withLock({ $0.workers[namespace]?[hook.name] == nil }) {
            do {
                // In a cluster, only the node that holds the hook delivers it.
                guard try store.claim(namespace, hook.name) else { continue }
                try startWorker(hook, in: namespace, head: position, host: host)
            } catch {
                return .failure(StorageError(.io, "the cursor of hook '\(hook.name)' could not be read or saved: \(error)"))
            }
        }
        return .success(position)
    }

    /// Starts delivering `hook` from its saved cursor, or from `head` (saved first) when it has none.
    private func startWorker(_ hook: HookDefinition, in namespace: String, head: Int64, host: any TriggerHost) throws {
        let start: HookCursor
        if let saved = try store.cursor(namespace, hook.name) {
            start = saved
        } else {
            start = .after(head)
            try store.saveCursor(start, namespace, hook.name)
        }
        let worker = HookWorker(namespace: namespace, hook: hook, start: start, store: store, host: host, settings: settings)
        state.withLock { $0.workers[namespace, default: [:]][hook.name] = worker }
    }

    /// What an activation depends on: the document (secrets included) and the processes' patterns.
    private static func signature(_ document: HooksDocument, _ functionPatterns: [TriggerPattern]) -> String {
        document.json(revealingSecrets: true) + "\n" + functionPatterns.map(\.description).sorted().joined(separator: "\n")
    }

    // MARK: In a cluster

    /// Every ``HookSettings/reconcileMilliseconds``, on `queue`, while the server runs: follows what the
    /// other nodes deployed and registered (so this node's writes keep the earlier values their patterns
    /// need), keeps the hooks this node holds, takes over those whose node stopped, and stops delivering
    /// those another node took.
    private func scheduleReconcile() {
        queue.asyncAfter(deadline: .now() + .milliseconds(settings.reconcileMilliseconds)) { [weak self] in
            guard let self, !state.withLock({ $0.stopped }) else { return }
            reconcile()
            scheduleReconcile()
        }
    }

    private func reconcile() {
        guard let host = state.withLock({ $0.stopped ? nil : $0.host }) else { return }
        var documents: [String: HooksDocument] = [:]
        var patterns: [String: [TriggerPattern]] = [:]
        do {
            for (namespace, document) in try store.documents() { documents[namespace] = document }
            for consumer in try consumers.consumers(nil) {
                patterns[consumer.namespace, default: []] += consumer.patterns
                if documents[consumer.namespace] == nil { documents[consumer.namespace] = HooksDocument() }
            }
        } catch {
            // The store is out of reach: the workers cannot save their cursors either; they stop
            // delivering until it answers again (another node may take their hooks meanwhile).
            return stopAllWorkers(because: "the hooks' store could not be read: \(error)")
        }
        for (namespace, document) in documents.sorted(by: { $0.key < $1.key }) {
            let activation = state.withLock { $0.activated[namespace] }
            if activation?.signature != Self.signature(document, patterns[namespace] ?? []) {
                if case .failure(let error) = activate(document, in: namespace) {
                    settings.log("hearth: the triggers of '\(namespace)' are not running: \(error.message)")
                }
                continue
            }
            guard let head = activation?.head else { continue }
            for hook in document.hooks {
                let worker = state.withLock { $0.workers[namespace]?[hook.name] }
                let holds = (try? store.claim(namespace, hook.name)) ?? false
                if holds && worker == nil {
                    do { try startWorker(hook, in: namespace, head: head, host: host) } catch {
                        settings.log("hearth: hook '\(hook.name)' of '\(namespace)' could not start: \(error)")
                    }
                } else if !holds, let worker {
                    worker.stop(waitingSeconds: Double(worker.hook.timeoutSeconds) + 1)
                    state.withLock { _ = $0.workers[namespace]?.removeValue(forKey: hook.name) }
                }
            }
        }
    }

    private func stopAllWorkers(because reason: String) {
        let workers = state.withLock { state in
            defer { state.workers = [:] }
            return state.workers.values.flatMap(\.values)
        }
        guard !workers.isEmpty else { return }
        settings.log("hearth: webhooks paused on this node: \(reason)")
        for worker in workers { worker.stop(waitingSeconds: Double(worker.hook.timeoutSeconds) + 1) }
    }

    private func wake(_ namespace: String) {
        guard let workers = state.withLock({ $0.workers[namespace] }) else { return }
        for worker in workers.values { worker.wake() }
    }

    // MARK: The admin endpoints

    public func answer(_ request: HookRequest) -> HTTPResponse {
        do {
            switch (request.endpoint, request.method) {
            case ("hooks", .get): return Self.json(200, try (store.document(request.namespace) ?? HooksDocument()).json(revealingSecrets: false))
            case ("hooks", .put): return try deploy(request)
            case ("hooks/status", .get): return Self.json(200, try statusJSON(request.namespace))
            case ("hooks/log", .get): return Self.json(200, try logJSON(request))
            case ("hooks/dead", .get): return Self.json(200, try deadJSON(request))
            case ("hooks/redeliver", .post): return try redeliver(request)
            case (let endpoint, _) where endpoint == "functions" || endpoint.hasPrefix("functions/"): return try answerFunctions(request)
            case ("hooks", _), ("hooks/status", _), ("hooks/log", _), ("hooks/dead", _), ("hooks/redeliver", _):
                return Self.error(405, "\(request.method.rawValue) is not allowed on /.settings/\(request.endpoint).json")
            default: return Self.error(404, "Not found: the hooks endpoints are hooks, hooks/status, hooks/log, hooks/dead and hooks/redeliver")
            }
        } catch {
            return Self.error(500, "the hooks store failed: \(error)")
        }
    }

    private func deploy(_ request: HookRequest) throws -> HTTPResponse {
        let document: HooksDocument
        do { document = try HooksDocument(json: try keepingSecrets(request.body, of: request.namespace)) } catch let error as TriggerError {
            return Self.error(400, error.message)
        }
        for hook in document.hooks {
            if let refusal = refusal(of: hook.url) { return Self.error(400, "hook \"\(hook.name)\": \(refusal)") }
        }
        return try queue.sync {
            try store.save(document, for: request.namespace, at: settings.clock())
            switch activate(document, in: request.namespace) {
            case .success: return Self.json(200, #"{"status":"ok"}"#)
            case .failure(let error): return Self.error(503, "the hooks were saved but could not start: \(error.message)")
            }
        }
    }

    /// The document with each secret shown as hidden (what GET answers, sent back by the console) replaced
    /// by the deployed hook's secret of that name, so a document read and deployed again keeps its secrets.
    private func keepingSecrets(_ body: [UInt8], of namespace: String) throws -> [UInt8] {
        let marker = Array("\"\(HooksDocument.redactedSecret)\"".utf8)
        guard body.count >= marker.count, (0...(body.count - marker.count)).contains(where: { body[$0..<$0 + marker.count].elementsEqual(marker) }),
            let deployed = try store.document(namespace), var root = try? Node(jsonBytes: body)
        else { return body }
        for hook in deployed.hooks {
            let secret = Path([ChildKey("hooks"), ChildKey(hook.name), ChildKey("secret")])
            if root.child(at: secret).stringValue == HooksDocument.redactedSecret { root.set(secret, to: Node(hook.secret)) }
        }
        return Array(root.json().utf8)
    }

    /// Why the server may not post to `url` (``OutboundAddresses/refusal(of:)``).
    private func refusal(of url: String) -> String? { settings.addresses.refusal(of: url) }

    private func statusJSON(_ namespace: String) throws -> String {
        let document = try store.document(namespace) ?? HooksDocument()
        let workers = state.withLock { $0.workers[namespace] ?? [:] }
        var hooks: [String] = []
        for hook in document.hooks {
            let counts = try store.counts(namespace, hook.name)
            let status = workers[hook.name]?.status.withLock { $0 }
            let stored = try store.cursor(namespace, hook.name)
            let cursor = status?.cursor ?? stored
            // In a cluster: the node delivering it (this one or another), whose own counts these are.
            let owner = try store.owner(namespace, hook.name)
            var fields = [
                "\"name\":\(Node(hook.name).json())", "\"path\":\(Node(hook.pattern.description).json())", "\"url\":\(Node(hook.url).json())",
                "\"running\":\(status != nil || owner != nil)", "\"position\":\(cursor?.readAfter ?? 0)", "\"deliveredSinceStart\":\(status?.delivered ?? 0)",
                "\"failingAttempts\":\(status?.failures ?? 0)", "\"deadLetters\":\(counts.dead)",
                "\"loggedSuccesses\":\(counts.delivered)", "\"loggedFailures\":\(counts.failed)",
            ]
            if let error = status?.lastError { fields.append("\"lastError\":\(Node(error).json())") }
            if let owner { fields.append("\"node\":\(Node(owner).json())") }
            hooks.append("{" + fields.joined(separator: ",") + "}")
        }
        return "{\"hooks\":[" + hooks.joined(separator: ",") + "]}"
    }

    private func logJSON(_ request: HookRequest) throws -> String {
        let limit = min(max(Int(request.parameters["limit"] ?? "") ?? 100, 1), ServerLimits.hookLogRowsMax)
        let rows = try store.deliveries(request.namespace, hook: request.parameters["hook"], limit: limit).map { hook, attempt in
            "{\"hook\":\(Node(hook).json()),\"id\":\(Node(attempt.eventId).json()),\"attempt\":\(attempt.attempt),\"status\":\(attempt.status),"
                + "\"latencyMs\":\(attempt.latencyMilliseconds),\"response\":\(Node(attempt.excerpt).json()),\"time\":\(attempt.time)}"
        }
        return "{\"deliveries\":[" + rows.joined(separator: ",") + "]}"
    }

    private func deadJSON(_ request: HookRequest) throws -> String {
        let rows = try store.deadLetters(request.namespace, hook: request.parameters["hook"]).map { letter in
            "{\"hook\":\(Node(letter.hook).json()),\"id\":\(Node(letter.eventId).json()),\"position\":\(letter.position),"
                + "\"attempts\":\(letter.attempts),\"error\":\(Node(letter.error).json()),\"parkedAt\":\(letter.parkedAt),"
                + "\"redelivering\":\(letter.redeliver),\"event\":\(String(decoding: letter.body, as: UTF8.self))}"
        }
        return "{\"deadLetters\":[" + rows.joined(separator: ",") + "]}"
    }

    /// `{"hook": NAME}` redelivers all of the hook's dead letters, `{"hook": NAME, "id": ID}` one.
    private func redeliver(_ request: HookRequest) throws -> HTTPResponse {
        guard let body = try? Node(jsonBytes: request.body), let hook = body.child("hook").stringValue else {
            return Self.error(400, #"redeliver takes {"hook": NAME} (every dead letter of the hook) or {"hook": NAME, "id": EVENT_ID}"#)
        }
        let id = body.child("id").stringValue
        let marked = try store.markForRedelivery(request.namespace, hook, eventId: id)
        guard marked > 0 else { return Self.error(404, "hook \"\(hook)\" has no dead letter\(id.map { " \($0)" } ?? "s") to redeliver") }
        state.withLock { $0.workers[request.namespace]?[hook] }?.wake()
        return Self.json(200, "{\"redelivering\":\(marked)}")
    }

    static func json(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "application/json; charset=utf-8"), ("cache-control", "no-cache")], body: Array(body.utf8))
    }

    static func error(_ status: Int, _ message: String) -> HTTPResponse {
        json(status, "{\"error\":\(Node(message).json())}")
    }
}
