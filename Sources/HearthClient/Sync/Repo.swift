import Foundation
import HearthCore
import HearthSupport

/// One database's client: the sync tree, the connection and the transactions, confined to one serial
/// queue (the official SDKs' "repo"). Public calls hop onto the queue; events and completions go out on
/// the database's callback queue, in the order they were raised.
final class Repo: @unchecked Sendable {  // all mutable state is confined to `queue`
    let info: RepoInfo
    let queue: DispatchQueue
    private let connection: PersistentConnection
    private var tree = SyncTree()
    /// `.info/connected`, `.info/serverTimeOffset`: set here, served like server data (never sent).
    private var infoTree = SyncTree()
    private var registrations: [RegistrationID: Registration] = [:]
    /// Which transactions run, wait or end (a value), and what each needs to run and answer.
    private var transactionQueue = TransactionQueue()
    private var transactions: [Int64: Transaction] = [:]
    private var nextWriteID: Int64 = 1
    /// Names this repo's writes to the server (``WireWriteIDs``).
    private let wireIDs = WireWriteIDs()
    private var pushIDs = PushIDGenerator()
    private let callbackQueue: @Sendable () -> DispatchQueue
    let persistence: ClientPersistence?

    /// Marks the repo's queue, so work already on it is not dispatched to it again.
    private static let onQueue = DispatchSpecificKey<ObjectIdentifier>()

    /// Runs `work` on the repo's queue before returning. GCD runs a `sync` block on the calling thread
    /// when the queue is idle, so a write's local events are computed without a thread hop (half the
    /// latency from `setValue` to its event). Inside the queue (a transaction's block, which runs there,
    /// writing or asking for a push ID) it runs in place: a `sync` onto the queue one is on never returns
    /// (on Apple platforms GCD traps), so nothing here ever does one.
    private func perform<Result>(_ work: () -> Result) -> Result {
        if isOnQueue { return work() }
        return queue.sync(execute: work)
    }

    /// Whether the caller is on the repo's queue (a transaction's block; the repo's own work).
    var isOnQueue: Bool { DispatchQueue.getSpecific(key: Self.onQueue) == ObjectIdentifier(self) }

    /// Server time minus local time, in milliseconds (`.info/serverTimeOffset`).
    private let offset = Locked<Int64>(0)
    private static let nextRegistration = Locked<RegistrationID>(1)

    struct Registration {
        var spec: QuerySpec
        var deliver: @Sendable (RaisedEvent) -> Void
        var cancel: (@Sendable (RequestOutcome) -> Void)?
    }

    init(
        info: RepoInfo, callbackQueue: @escaping @Sendable () -> DispatchQueue, persistence: ClientPersistence?,
        transport: @escaping TransportFactory = Transports.platform
    ) {
        self.info = info
        queue = DispatchQueue(label: "hearth.client.repo.\(info.namespace)")
        self.callbackQueue = callbackQueue
        self.persistence = persistence
        connection = PersistentConnection(info: info, queue: queue, transport: transport)
        connection.delegate = self
        persistence?.attach(queue: queue)
        queue.setSpecific(key: Self.onQueue, value: ObjectIdentifier(self))
        queue.async { [self] in
            setInfo("connected", Node(false))
            setInfo("serverTimeOffset", Node(Int64(0)))
            restorePersistedWrites()
            connection.open()
        }
    }

    /// The server's clock as best known here (ms): local time plus the handshake's offset.
    var estimatedServerTime: Int64 {
        Int64(Date().timeIntervalSince1970 * 1000) + offset.withLock { $0 }
    }

    static func makeRegistrationID() -> RegistrationID {
        nextRegistration.withLock { id in
            defer { id += 1 }
            return id
        }
    }

    // MARK: Raising events

    /// Hands a sync output to the world: listen changes to the connection, events and cancellations to
    /// the callback queue (in one hop, so they keep their order), then `after`.
    private func raise(_ output: SyncOutput, info: Bool = false, then after: (@Sendable () -> Void)? = nil) {
        if !info {
            for change in output.listens { apply(change) }
        }
        var deliveries: [@Sendable () -> Void] = []
        for event in output.events {
            guard let registration = registrations[event.registration] else { continue }
            let deliver = registration.deliver
            deliveries.append { deliver(event) }
        }
        for (id, status, reason) in output.cancelled {
            guard let registration = registrations.removeValue(forKey: id) else { continue }
            if let cancel = registration.cancel {
                let outcome = RequestOutcome(status: status, data: reason.map { Array(Node($0).json().utf8) } ?? Array("null".utf8))
                deliveries.append { cancel(outcome) }
            }
        }
        if let after { deliveries.append(after) }
        guard !deliveries.isEmpty else { return }
        let batch = deliveries
        callbackQueue().async { for delivery in batch { delivery() } }
    }

    private func apply(_ change: ListenChange) {
        switch change {
        case .start(let key, let query, _):
            connection.listen(key, query: query, hash: { [unowned self] in tree.listenHash(key) }) { [weak self] outcome in
                guard let self else { return }
                if outcome.isOK {
                    raise(tree.listenComplete(key))
                    persistence?.listenCompleted(key: key, query: query, tree: tree)
                } else {
                    raise(tree.listenFailed(key, status: outcome.status, reason: outcome.reason))
                }
            }
        case .stop(let key, let query):
            connection.unlisten(key, query: query)
        }
    }

    // MARK: Listeners

    /// Starts delivering `type` events of `spec` to `deliver`; `cancel` runs if the listen is refused.
    func addListener(
        _ id: RegistrationID, spec: QuerySpec, type: ListenEventType, deliver: @escaping @Sendable (RaisedEvent) -> Void,
        cancel: (@Sendable (RequestOutcome) -> Void)?
    ) {
        queue.async { [self] in
            registrations[id] = Registration(spec: spec, deliver: deliver, cancel: cancel)
            if spec.path.first?.string == ".info" {
                let output = infoTree.addRegistration(id, spec: QuerySpec(path: spec.path), type: type)
                raise(output, info: true)
                raise(infoTree.listenComplete(ListenKey(path: spec.path, tag: nil)), info: true)
                return
            }
            loadCachedData(for: spec)
            raise(tree.addRegistration(id, spec: spec, type: type))
        }
    }

    func removeListener(_ id: RegistrationID) {
        queue.async { [self] in
            guard let registration = registrations.removeValue(forKey: id) else { return }
            if registration.spec.path.first?.string == ".info" {
                _ = infoTree.removeRegistration(id)
            } else {
                raise(tree.removeRegistration(id))
            }
        }
    }

    /// Every listener of `spec` (or of any query at `path` when `spec` is nil) removed.
    func removeListeners(at path: Path, spec: QuerySpec?) {
        queue.async { [self] in
            let ids = registrations.filter { entry in
                spec.map { entry.value.spec == $0 } ?? (entry.value.spec.path == path)
            }.map(\.key)
            for id in ids.sorted() {
                let registration = registrations.removeValue(forKey: id)
                if registration?.spec.path.first?.string == ".info" {
                    _ = infoTree.removeRegistration(id)
                } else {
                    raise(tree.removeRegistration(id))
                }
            }
        }
    }

    /// `keepSynced`: a listener with no events keeps the query's data current (and cached).
    private var keptSynced: [QuerySpec: RegistrationID] = [:]

    func keepSynced(_ spec: QuerySpec, _ keep: Bool) {
        queue.async { [self] in
            if keep {
                guard keptSynced[spec] == nil else { return }
                let id = Self.makeRegistrationID()
                keptSynced[spec] = id
                registrations[id] = Registration(spec: spec, deliver: { _ in }, cancel: nil)
                loadCachedData(for: spec)
                raise(tree.addRegistration(id, spec: spec, type: .none))
                persistence?.setKeptSynced(spec, true)
            } else if let id = keptSynced.removeValue(forKey: spec) {
                registrations[id] = nil
                raise(tree.removeRegistration(id))
                persistence?.setKeptSynced(spec, false)
            }
        }
    }

    private func setInfo(_ key: String, _ value: Node) {
        raise(infoTree.applyServerOverwrite(at: Path(".info/\(key)"), value, tag: nil), info: true)
    }

    // MARK: Writes

    /// A set at `path` (`.priority` last sets a priority), with `value` validated and still holding its
    /// server-value placeholders (sent as they are; resolved here for the local events).
    func set(_ path: Path, _ value: Node, completion: (@Sendable (RequestOutcome) -> Void)?) {
        perform { [self] in
            let id = takeWriteID()
            abortTransactions(overlapping: path)
            let resolved = resolveServerValues(value, at: path)
            let wireID = wireIDs.id(of: id)
            persistence?.saveWrite(id: id, writeID: wireID, path: path, set: value, merge: nil)
            raise(tree.applyUserWrite(PendingWrite(id: id, kind: .set(path, resolved), visible: true)))
            connection.write(id: id, .put(path: path, data: value, hash: nil, writeID: wireID), compareAndSet: false) { [weak self] outcome in
                self?.writeAnswered(id, outcome, "setValue: or removeValue:", at: path, completion: completion)
            }
        }
    }

    /// A multi-path update: every child path relative to `path`.
    func update(_ path: Path, _ children: [(Path, Node)], completion: (@Sendable (RequestOutcome) -> Void)?) {
        perform { [self] in
            guard !children.isEmpty else {
                raise(SyncOutput()) { completion?(RequestOutcome(status: "ok", data: [])) }
                return
            }
            let id = takeWriteID()
            for (child, _) in children { abortTransactions(overlapping: path.appending(path: child)) }
            let root = tree.eventTree.root
            let now = estimatedServerTime
            let resolved = children.map { child, value in
                (child, (try? ServerValues.resolve(value, at: path.appending(path: child), in: root, now: now)) ?? value)
            }
            let wireID = wireIDs.id(of: id)
            persistence?.saveWrite(id: id, writeID: wireID, path: path, set: nil, merge: children)
            raise(tree.applyUserWrite(PendingWrite(id: id, kind: .merge(path, resolved), visible: true)))
            connection.write(id: id, .merge(path: path, data: children, writeID: wireID), compareAndSet: false) { [weak self] outcome in
                self?.writeAnswered(id, outcome, "updateChildValues:", at: path, completion: completion)
            }
        }
    }

    /// A write's answer: the write leaves the tree (reverted if refused). A refusal is also logged, as
    /// FirebaseDatabase logs it ("setValue: or removeValue: at /x failed: permission_denied"), so a write
    /// made without a completion, or whose `try await` resolved to the fire-and-forget overload (see
    /// docs/swift-sdk.md, "Top-level code"), is not refused in silence.
    private func writeAnswered(
        _ id: Int64, _ outcome: RequestOutcome, _ operation: String, at path: Path, completion: (@Sendable (RequestOutcome) -> Void)?
    ) {
        if !outcome.isOK && outcome.status != RequestOutcome.canceled.status {
            ClientLog.warning("\(operation) at \(path.slashed) failed: \(outcome.status)")
        }
        persistence?.removeWrite(id: id)
        raise(tree.ackWrite(id, revert: !outcome.isOK)) { completion?(outcome) }
    }

    private func takeWriteID() -> Int64 {
        defer { nextWriteID += 1 }
        return nextWriteID
    }

    private func resolveServerValues(_ value: Node, at path: Path) -> Node {
        guard ServerValues.containsPlaceholders(value) else { return value }
        return (try? ServerValues.resolve(value, at: path, in: tree.eventTree.root, now: estimatedServerTime)) ?? value
    }

    /// Every write not yet acknowledged is dropped and undone locally; their completions and every
    /// running transaction's get `write_canceled`.
    func purgeOutstandingWrites() {
        queue.async { [self] in
            connection.purgeOutstandingWrites()
            persistence?.removeAllWrites()
            let aborted = transactionQueue.cancelAll(status: "write_canceled").compactMap { step -> Transaction? in
                guard case .failed(let id, _, _) = step else { return nil }
                return transactions.removeValue(forKey: id)
            }
            for transaction in aborted { _ = tree.removeRegistration(transaction.registration) }
            raise(tree.removeAllWrites()) {
                for transaction in aborted { transaction.completion(RequestOutcome.canceled, false, nil) }
            }
        }
    }

    // MARK: onDisconnect

    func onDisconnect(_ request: ClientRequest, completion: (@Sendable (RequestOutcome) -> Void)?) {
        queue.async { [self] in
            let queue = callbackQueue
            connection.onDisconnect(request) { outcome in
                guard let completion else { return }
                queue().async { completion(outcome) }
            }
        }
    }

    // MARK: Reading

    /// `getData()` (docs/protocol.md §2.9; Firebase's order): a complete view's value at once; else the
    /// server's answer to `g`; offline, the disk cache; else an error.
    func get(_ spec: QuerySpec, completion: @escaping @Sendable (Result<Node, RequestOutcome>) -> Void) {
        queue.async { [self] in
            let queue = callbackQueue
            if spec.path.first?.string == ".info" {
                let value = infoTree.visibleValue(at: spec.path)
                queue().async { completion(.success(value)) }
                return
            }
            if let value = tree.completeValue(spec) {
                queue().async { completion(.success(value)) }
                return
            }
            connection.get(path: spec.path, query: spec.query.loadsAllData ? nil : spec.query) { [weak self] outcome in
                guard let self else { return }
                if outcome.isOK, let node = try? Node(jsonBytes: outcome.data) {
                    queue().async { completion(.success(node)) }
                } else if let cached = persistence?.cachedValue(for: spec) {
                    queue().async { completion(.success(cached)) }
                } else {
                    queue().async { completion(.failure(outcome)) }
                }
            }
        }
    }

    /// A new push ID on the server's clock as known here.
    func nextPushID() -> String {
        perform { pushIDs.next(now: estimatedServerTime) }
    }

    // MARK: Connection control

    func goOffline() { queue.async { [self] in connection.interrupt("offline") } }
    func goOnline() { queue.async { [self] in connection.resume("offline") } }

    /// The token source for the connection's `auth`: the app's ``Auth``.
    func setAuthTokenProvider(_ provider: (@Sendable (Bool, @escaping @Sendable (String?) -> Void) -> Void)?) {
        queue.async { [self] in
            connection.authToken = provider
            connection.refreshAuth()
        }
    }

    /// The token changed (sign-in, refresh, sign-out): the connection sends the new one, or unauths.
    func authChanged() {
        queue.async { [self] in connection.refreshAuth() }
    }

    /// Shortens the reconnection delay (tests that restart servers).
    func setReconnectDelay(minimum: Double, maximum: Double) {
        queue.async { [self] in connection.backoff = ReconnectBackoff(minimum: minimum, maximum: maximum) }
    }

    // MARK: Transactions

    /// What a transaction needs to run and to answer; which one runs when is ``TransactionQueue``'s.
    private struct Transaction: Sendable {
        var id: Int64
        var path: Path
        var update: @Sendable (Node) -> TransactionStep
        var completion: @Sendable (RequestOutcome?, Bool, Node?) -> Void
        var localEvents: Bool
        var registration: RegistrationID
        /// Its write in the sync tree, once its block has run.
        var writeID: Int64?
    }

    enum TransactionStep: Sendable {
        case commit(Node)
        case abort
        case invalid(String)
    }

    /// Firebase's transactions: `update` runs on the current value (here, on the repo's queue), the
    /// result is written with the hash of that value as a compare-and-set; a stale hash runs it again
    /// on the newer value, up to 25 times. A listen keeps the value current meanwhile. Transactions on
    /// overlapping locations run one after another (``TransactionQueue``).
    func runTransaction(
        at path: Path, localEvents: Bool, update: @escaping @Sendable (Node) -> TransactionStep,
        completion: @escaping @Sendable (RequestOutcome?, Bool, Node?) -> Void
    ) {
        queue.async { [self] in
            let registration = Self.makeRegistrationID()
            registrations[registration] = Registration(spec: QuerySpec(path: path), deliver: { _ in }, cancel: nil)
            raise(tree.addRegistration(registration, spec: QuerySpec(path: path), type: .none))
            let id = takeWriteID()
            transactions[id] = Transaction(
                id: id, path: path, update: update, completion: completion, localEvents: localEvents, registration: registration)
            perform(transactionQueue.add(id, at: path))
        }
    }

    /// Does what the transaction queue decided.
    private func perform(_ steps: [TransactionQueue.Step]) {
        for step in steps {
            switch step {
            case .run(let id): runTransaction(id)
            case .committed(let id): finishTransaction(id, outcome: nil, committed: true, acknowledged: true)
            case .failed(let id, let status, let acknowledged):
                let message: String
                switch status {
                case "set": message = "Transaction aborted by a set"
                case "maxretry": message = "Transaction had too many retries"
                default: message = ""
                }
                let outcome = message.isEmpty ? pendingOutcomes.removeValue(forKey: id) ?? RequestOutcome(status: status, data: Array("null".utf8))
                    : RequestOutcome(status: status, data: Array(Node(message).json().utf8))
                finishTransaction(id, outcome: outcome, committed: false, acknowledged: acknowledged)
            }
        }
    }
    /// A refusal's outcome as the server sent it (its reason), for the step that ends the transaction.
    private var pendingOutcomes: [Int64: RequestOutcome] = [:]

    /// Runs the transaction's block on the current value (without its own earlier write), then writes
    /// the result as a compare-and-set, or ends it as the block says.
    private func runTransaction(_ id: Int64) {
        guard let before = transactions[id] else { return }
        let exclude: Set<Int64> = before.writeID.map { [$0] } ?? []
        let current = tree.visibleValue(at: before.path, excluding: exclude)
        // The app's block may call the SDK (a write, a push ID, another transaction), which runs here in
        // place and may end this one (a set over it): it is looked up again afterwards.
        let step = before.update(current)
        guard var transaction = transactions[id] else { return }
        switch step {
        case .abort:
            finishTransaction(id, outcome: nil, committed: false, value: current)
            perform(transactionQueue.ended(id))
        case .invalid(let message):
            finishTransaction(id, outcome: RequestOutcome(status: "invalid_data", data: Array(Node(message).json().utf8)), committed: false)
            perform(transactionQueue.ended(id))
        case .commit(let value):
            let writeID = transaction.writeID ?? takeWriteID()
            let resolved = resolveServerValues(value, at: transaction.path)
            let write = PendingWrite(id: writeID, kind: .set(transaction.path, resolved), visible: transaction.localEvents)
            raise(transaction.writeID == nil ? tree.applyUserWrite(write) : tree.replaceWrite(write))
            transaction.writeID = writeID
            transactions[id] = transaction
            transactionQueue.sent(id)
            // Every attempt of a transaction carries the ID of its first: one sent again after its
            // connection dropped, which the server had applied, is not applied a second time.
            let request = ClientRequest.put(path: transaction.path, data: value, hash: current.hash, writeID: wireIDs.id(of: writeID))
            connection.write(id: writeID, request, compareAndSet: true) { [weak self] outcome in
                guard let self else { return }
                if !outcome.isOK { pendingOutcomes[id] = outcome }
                perform(transactionQueue.answered(id, status: outcome.status))
            }
        }
    }

    /// Ends a transaction: its write leaves the pending writes (undone unless `acknowledged`), its
    /// listen goes, and its completion runs after the events that took, with the value it left.
    private func finishTransaction(
        _ id: Int64, outcome: RequestOutcome?, committed: Bool, acknowledged: Bool = false, value: Node? = nil
    ) {
        pendingOutcomes[id] = nil
        guard let transaction = transactions.removeValue(forKey: id) else { return }
        var output = SyncOutput()
        if let writeID = transaction.writeID { output.append(tree.ackWrite(writeID, revert: !acknowledged)) }
        registrations[transaction.registration] = nil
        output.append(tree.removeRegistration(transaction.registration))
        let completion = transaction.completion
        let result = value ?? (committed ? tree.visibleValue(at: transaction.path) : nil)
        raise(output) { completion(outcome, committed, result) }
    }

    /// A set or update at `path` aborts the transactions it overlaps (Firebase's `set` status).
    private func abortTransactions(overlapping path: Path) {
        perform(transactionQueue.set(at: path))
    }

    /// Views the sync tree holds (tests; call on `queue`).
    var debugViewCount: Int { tree.viewCount }
    /// Connection attempts that ended without connecting (tests; call on `queue`).
    var debugFailedConnectionAttempts: Int { connection.attemptsThatFailed }

    // MARK: Persistence

    private func restorePersistedWrites() {
        guard let persistence else { return }
        for saved in persistence.loadWrites() {
            let id = takeWriteID()
            persistence.renumberWrite(from: saved.id, to: id)
            let path = saved.path
            if let children = saved.merge {
                let resolved = children.map { ($0.0, resolveServerValues($0.1, at: path.appending(path: $0.0))) }
                raise(tree.applyUserWrite(PendingWrite(id: id, kind: .merge(path, resolved), visible: true)))
                connection.write(id: id, .merge(path: path, data: children, writeID: saved.writeID), compareAndSet: false) { [weak self] outcome in
                    self?.writeAnswered(id, outcome, "Persisted write", at: path, completion: nil)
                }
            } else if let value = saved.set {
                raise(tree.applyUserWrite(PendingWrite(id: id, kind: .set(path, resolveServerValues(value, at: path)), visible: true)))
                connection.write(id: id, .put(path: path, data: value, hash: nil, writeID: saved.writeID), compareAndSet: false) { [weak self] outcome in
                    self?.writeAnswered(id, outcome, "Persisted write", at: path, completion: nil)
                }
            }
        }
    }

    /// Data cached on disk for a view about to be created serves its listeners at once.
    private func loadCachedData(for spec: QuerySpec) {
        guard let persistence, !tree.hasView(spec), let cached = persistence.cachedValue(for: spec) else { return }
        _ = cached
        raise(tree.applyCachedData(cached, for: spec))
    }
}

extension Repo: PersistentConnectionDelegate {
    func connectionReady(serverTime: Int64) {
        let local = Int64(Date().timeIntervalSince1970 * 1000)
        offset.withLock { $0 = serverTime - local }
        setInfo("serverTimeOffset", Node(serverTime - local))
        setInfo("connected", Node(true))
    }

    func connectionLost() {
        setInfo("connected", Node(false))
    }

    func dataPushed(at path: Path, data: Node, merge: [(Path, Node)]?, tag: Int64?) {
        if let merge {
            raise(tree.applyServerMerge(at: path, merge, tag: tag))
        } else {
            raise(tree.applyServerOverwrite(at: path, data, tag: tag))
        }
        persistence?.serverDataChanged(at: path, tree: tree)
    }

    func listenRevoked(at path: Path, query: WireQuery?) {
        let keys = query.map { tree.listenKey(forQuery: $0, at: path).map { [$0] } ?? [] } ?? tree.listenKeys(at: path)
        for key in keys {
            raise(tree.listenFailed(key, status: "permission_denied", reason: nil))
        }
    }

    func serverShutdown(reason: String) {
        ClientLog.warning("the server will not serve this client: \(reason)")
    }
}
