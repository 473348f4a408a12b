import Foundation
import HearthCore
import HearthProtocol
import HearthRules
import HearthStorage
import HearthSupport

/// Why a namespace cannot be served.
struct NamespaceUnavailable: Error, Equatable {
    enum Reason: Equatable {
        /// Not a database name (``NamespaceName``): REST 400.
        case invalidName
        /// No such database, and the caller may not create one: REST 404.
        case notFound
        /// Its storage could not be opened or loaded: REST 500.
        case cannotOpen
    }

    var reason: Reason
    var message: String
}

/// Every namespace the server has opened, and how more are opened: which names are valid, who may open
/// one that does not exist yet, loading large ones (or, over the network, all) off the loop, deleting
/// them off the loop, and their stored rules. Loop thread only.
final class NamespaceRegistry: @unchecked Sendable {
    // Sendable only to come back to the loop from other threads (`withNamespace`, `delete`, `saveRules`);
    // used on the loop alone.
    private let emulator: Bool
    private let openEngine: @Sendable (String) throws -> any StorageEngine
    /// The namespaces' files: bytes before one is opened (decides where it loads), which exist, removal.
    private let files: NamespaceFiles
    /// Where rules and their versions are kept; asked off the loop only (see ``onMaintenance(_:then:)``).
    private let rules: RulesStorage
    /// Each open namespace's deployed versions, read with its rules when it opened.
    private var histories: [String: [RulesVersion]] = [:]
    /// Namespaces whose stored data is being removed off the loop: not opened again until that is done.
    private var deleting: Set<String> = []
    /// Saving rules and deleting namespaces, one at a time in the order asked, off the loop: so two
    /// deploys apply in the order they were made, and a deletion removes rules saved before it.
    private let maintenance = DispatchQueue(label: "hearth.namespaces")
    private let log: Log
    /// Counts what the namespaces' fan-out delivers.
    let metrics: ServerMetrics?
    private var namespaces: [String: Namespace] = [:]
    /// Namespaces loading off the loop thread, with what waits for each.
    private var loading: [String: [(Result<Namespace, NamespaceUnavailable>) -> Void]] = [:]
    /// The loads under way off the loop, which ``close()`` waits for.
    private let offLoop = OffLoopLoads()
    /// Set when the loop starts: large namespaces load on their own thread and come back through it, and
    /// every namespace's durable writes finish on the loop.
    var executor: (any LoopExecutor)?

    /// Database files smaller than this load on the loop thread (a few milliseconds).
    static let backgroundLoadBytesMin = 4 << 20

    init(
        emulator: Bool, rules: RulesStorage = .inMemory(), files: NamespaceFiles = .none, log: Log,
        metrics: ServerMetrics? = nil, openEngine: @escaping @Sendable (String) throws -> any StorageEngine
    ) {
        self.metrics = metrics
        self.emulator = emulator
        self.openEngine = openEngine
        self.files = files
        self.rules = rules
        self.log = log
    }

    subscript(name: String) -> Namespace? { namespaces[name] }

    /// The namespaces opened so far.
    var all: Dictionary<String, Namespace>.Values { namespaces.values }
    var names: [String] { namespaces.keys.sorted() }

    /// Bytes of `name`'s stored data (0 when unknown).
    func storedBytes(_ name: String) -> Int { files.bytes(name) }

    /// Every namespace stored or open, sorted.
    var knownNames: [String] { Array(Set(files.names()).union(namespaces.keys)).sorted() }

    /// Closes every namespace's engine, waiting for queued commits, after the work started off the loop
    /// (loads, rules saves, deletions) has ended: nothing of it runs once the process exits. Engines
    /// that loads opened and the loop never took (it stopped first) are closed too. Call after the loop
    /// has stopped.
    func close() {
        maintenance.sync {}
        offLoop.finish()
        for namespace in namespaces.values { namespace.database.engine.close() }
        namespaces.removeAll()
    }

    /// Whether a caller may open `name`: any valid name in emulator mode (created on first use, as the
    /// emulator does); otherwise one that exists, unless an admin creates it. Strangers cannot make the
    /// server create databases (disk, file descriptors) by naming them.
    func mayOpen(_ name: String, isAdmin: Bool) -> Bool {
        emulator || isAdmin || namespaces[name] != nil || loading[name] != nil || (!deleting.contains(name) && files.exists(name))
    }

    /// Firebase's answer for a database that does not exist, with what to do about it.
    static func noSuchNamespace(_ name: String) -> NamespaceUnavailable {
        NamespaceUnavailable(
            reason: .notFound,
            message: "Firebase error. Please ensure that you spelled the name of your Firebase correctly "
                + "(namespace '\(name.prefix(80))' does not exist; an admin creates it, e.g. with hearth rules deploy \(name.prefix(80)) RULES)")
    }

    /// The namespace `name`, opened and loaded here and now (tests, and namespaces too small to matter).
    func open(_ name: String) throws(NamespaceUnavailable) -> Namespace {
        if let namespace = namespaces[name] { return namespace }
        if deleting.contains(name) { throw Self.beingDeleted(name) }
        return try adopt(name, Self.openAndLoad(name, openEngine, rules)).get()
    }

    /// Runs `body` with the namespace once it is loaded: at once when it is, else when its load is done.
    /// A namespace whose files hold more than ``backgroundLoadBytesMin``, and every namespace opened over
    /// the network (``NamespaceFiles/opensOverNetwork``), loads on its own thread, so the loop keeps
    /// serving everyone else meanwhile (a 300 MB database takes seconds, a PostgreSQL that stopped
    /// answering as long as the connect timeout); requests for it wait.
    func withNamespace(_ name: String, _ body: @escaping (Result<Namespace, NamespaceUnavailable>) -> Void) {
        if let namespace = namespaces[name] { return body(.success(namespace)) }
        if loading[name] != nil { return loading[name, default: []].append(body) }
        guard NamespaceName.isValid(name) else {
            return body(.failure(NamespaceUnavailable(reason: .invalidName, message: NamespaceName.invalidMessage(name))))
        }
        if deleting.contains(name) { return body(.failure(Self.beingDeleted(name))) }
        let large = files.bytes(name) > Self.backgroundLoadBytesMin
        guard let executor, large || files.opensOverNetwork else {
            return body(adopt(name, Self.openAndLoad(name, openEngine, rules)))
        }
        loading[name] = [body]
        if large { log("hearth: loading namespace '\(name)' (\(files.bytes(name) >> 20) MB)…") }
        let (openEngine, rules, offLoop) = (openEngine, rules, offLoop)
        offLoop.started()
        NamedThread.start("hearth.load.\(name)") {
            defer { offLoop.ended() }
            let result = Self.openAndLoad(name, openEngine, rules)
            let held = (try? result.get()).map { offLoop.hold($0.engine) }
            executor.execute { [self] in
                // Taken back from `offLoop`, unless close() closed it (the loop then stopped first).
                if let held, offLoop.take(held) == nil { return }
                let adopted = adopt(name, result)
                if case .success = adopted, large { log("hearth: namespace '\(name)' loaded.") }
                for waiter in loading.removeValue(forKey: name) ?? [] { waiter(adopted) }
            }
        }
    }

    /// What opening a namespace reads: its engine, its tree and its stored rules.
    private typealias Loaded = (engine: any StorageEngine, root: Node, appliedWriteIDs: [String], rules: StoredRules)

    /// Reads the stored rules, opens the engine and loads the tree: any thread. Rules that cannot be read
    /// fail the open: serving under the default rules (open in emulator mode) could allow what the
    /// deployed ones deny.
    private static func openAndLoad(
        _ name: String, _ openEngine: (String) throws -> any StorageEngine, _ rules: RulesStorage
    ) -> Result<Loaded, NamespaceUnavailable> {
        guard NamespaceName.isValid(name) else {
            return .failure(NamespaceUnavailable(reason: .invalidName, message: NamespaceName.invalidMessage(name)))
        }
        let stored: StoredRules
        do { stored = try rules.load(name) } catch {
            return .failure(NamespaceUnavailable(reason: .cannotOpen, message: "Could not read the rules of '\(name)': \(error)"))
        }
        do {
            let engine = try openEngine(name)
            do { return .success((engine, try engine.load(progress: nil), try engine.rememberedWriteIDs(), stored)) } catch {
                engine.close()
                throw error
            }
        } catch let error as StorageError where error.code == .invalidData {
            return .failure(NamespaceUnavailable(reason: .invalidName, message: NamespaceName.invalidMessage(name)))
        } catch {
            return .failure(NamespaceUnavailable(reason: .cannotOpen, message: "Could not open the database '\(name)': \(error)"))
        }
    }

    /// Makes a loaded engine and tree the namespace `name` (loop thread). Its durable writes finish on
    /// the loop (see `DurableDatabase.init(engine:root:finishOn:)`): their completions answer writers and
    /// tell listeners there anyway.
    private func adopt(_ name: String, _ loaded: Result<Loaded, NamespaceUnavailable>) -> Result<Namespace, NamespaceUnavailable> {
        if case .failure(let unavailable) = loaded, unavailable.reason == .cannotOpen {
            // Its clients are refused (a realtime one closed, a REST one answered 500): said here too.
            log("hearth: namespace '\(name)' could not be opened: \(unavailable.message)")
        }
        return loaded.map { loaded in
            if let existing = namespaces[name] {
                loaded.engine.close()
                return existing
            }
            let rules = ruleSet(name, loaded.rules.rules)
            var finisher: DurableDatabase.Finisher?
            if let executor { finisher = { executor.execute($0) } }
            let namespace = Namespace(
                name: name, database: DurableDatabase(engine: loaded.engine, root: loaded.root, finishOn: finisher),
                rules: rules.rules, rulesDeployed: rules.deployed, appliedWriteIDs: loaded.appliedWriteIDs, metrics: metrics)
            namespaces[name] = namespace
            histories[name] = loaded.rules.versions
            follow(namespace)
            return namespace
        }
    }

    /// When other servers write the namespace too (PostgreSQL in a cluster), their commits reach this
    /// server's tree and go through the same fan-out as local writes, on the loop (the database's
    /// finisher runs there). Without a loop there is nobody to tell: nothing is followed.
    private func follow(_ namespace: Namespace) {
        guard namespace.database.finisher != nil else { return }
        let reference = FollowingNamespace(namespace)
        namespace.database.follow { [executor] remote in
            executor?.assertOnLoop("another node's commit")
            guard let namespace = reference.namespace else { return }
            let write: Write = remote.locations.count == 1 ? .set(remote.locations[0]) : .update(.root, remote.locations)
            namespace.publish(CommittedChange(write: write, root: remote.root, changes: remote.changes))
        }
    }

    // MARK: Creating and deleting (the console's Namespaces page)

    /// Whether `name` is being loaded off the loop now.
    func isLoading(_ name: String) -> Bool { loading[name] != nil }

    /// Whether `name` is stored, open, loading or being deleted.
    func exists(_ name: String) -> Bool {
        namespaces[name] != nil || loading[name] != nil || deleting.contains(name) || files.exists(name)
    }

    /// Whether `name`'s stored data is being removed now.
    func isDeleting(_ name: String) -> Bool { deleting.contains(name) }

    static func beingDeleted(_ name: String) -> NamespaceUnavailable {
        NamespaceUnavailable(reason: .notFound, message: "The namespace '\(name.prefix(80))' is being deleted")
    }

    /// Deletes a namespace: its clients are told and disconnected at once (realtime `s`, streams
    /// `cancel`); then, off the loop, its engine is closed (queued commits finish first) and its stored
    /// data, rules and rules history are removed (PostgreSQL may take seconds for a large one). Meanwhile
    /// it is not opened again. `completion` runs on the loop.
    func delete(_ name: String, completion: @escaping (Result<Void, NamespaceUnavailable>) -> Void) {
        guard loading[name] == nil, !deleting.contains(name) else {
            let doing = loading[name] != nil ? "still loading" : "already being deleted"
            return completion(.failure(NamespaceUnavailable(reason: .cannotOpen, message: "'\(name)' is \(doing); try again in a moment")))
        }
        let namespace = namespaces.removeValue(forKey: name)
        if let namespace { disconnectClients(of: namespace) }
        deleting.insert(name)
        histories[name] = nil
        let (engine, files, rules) = (namespace?.database.engine, files, rules)
        onMaintenance({ () -> Result<Void, NamespaceUnavailable> in
            engine?.close()
            do { try files.delete(name) } catch {
                return .failure(NamespaceUnavailable(reason: .cannotOpen, message: "Could not delete the stored data of '\(name)': \(error)"))
            }
            do { try rules.delete(name) } catch {
                return .failure(NamespaceUnavailable(reason: .cannotOpen, message: "Deleted the data of '\(name)' but not its rules: \(error)"))
            }
            return .success(())
        }) { [self] result in
            deleting.remove(name)
            if case .success = result { log("hearth: namespace '\(name)' deleted.") }
            completion(result)
        }
    }

    /// Another server deleted `name` (its notification, in a cluster): its clients here are told and
    /// disconnected, and its engine closed off the loop. Opened again, it starts from what storage
    /// holds then. Nothing happens when it is not open here, or when this server is deleting it.
    func close(deletedElsewhere name: String) {
        guard !deleting.contains(name), let namespace = namespaces.removeValue(forKey: name) else { return }
        disconnectClients(of: namespace)
        histories[name] = nil
        let engine = namespace.database.engine
        onMaintenance({ engine.close() }) { [self] _ in
            log("hearth: namespace '\(name)' was deleted by another server; closed here.")
        }
    }

    /// Tells a deleted namespace's clients (realtime `s`, streams `cancel`, the console's feeds).
    private func disconnectClients(of namespace: Namespace) {
        for stream in Array(namespace.streams.values) { stream.cancel() }
        for session in Array(namespace.listeners.realtimeSessions) { session.namespaceDeleted() }
        for feed in Array(namespace.consoleFeeds.values) { feed.finish() }
        for stream in Array(namespace.changeFeedStreams.values) { stream.finish() }
    }

    /// Runs `work` on the maintenance queue, then `then` with its result on the loop; both here and now
    /// when the loop has not started (tests).
    private func onMaintenance<Value: Sendable>(_ work: @escaping @Sendable () -> Value, then: @escaping (Value) -> Void) {
        guard let executor else { return then(work()) }
        let then = LoopBound(then)
        maintenance.async {
            let value = work()
            executor.execute { then.value(value) }
        }
    }

    // MARK: Rules

    /// The rules JSON stored for `name` as a rule set, else the mode's default (open in emulator mode,
    /// locked otherwise). Stored rules that no longer compile leave the namespace locked, with the reason
    /// logged.
    private func ruleSet(_ name: String, _ source: String?) -> (rules: RuleSet, deployed: Bool) {
        guard let source else { return (Self.defaultRules(emulator: emulator), false) }
        do { return (try RuleSet(source: source), true) } catch {
            log("hearth: the stored rules of '\(name)' do not compile (\(error)); it stays locked until new rules are deployed")
            return (.locked, true)
        }
    }

    /// Stores `source` as `namespace`'s rules with a new version in its history (`deployed`: what was
    /// deployed, the Bolt text the JSON `source` was compiled from), then calls `completion` on the loop
    /// with the version's number. The caller applies the rules only then: no decision is made under
    /// rules a restart would not bring back. The storage is asked off the loop (it may be PostgreSQL, a
    /// round trip away, or not answering), one save at a time in order, so two deploys apply in the order
    /// they were made; requests go on under the old rules meanwhile.
    func saveRules(
        _ source: String, for namespace: Namespace, deployed: (RulesVersion.Format, String)? = nil, now: Int64,
        completion: @escaping (Result<Int, any Error>) -> Void
    ) {
        let deployment = RulesDeployment(format: deployed?.0 ?? .json, source: deployed?.1 ?? source, deployedAt: now)
        let (name, rules) = (namespace.name, rules)
        onMaintenance({ Result { try rules.save(name, source, deployment) } }) { [self] result in
            // A namespace deleted (or deleted and opened again) meanwhile has read its history anew.
            // A reload of another server's notice may have read this very version already.
            if case .success(let number) = result, namespaces[name] === namespace,
                !(histories[name] ?? []).contains(where: { $0.version == number })
            {
                var stored = StoredRules(versions: histories[name] ?? [])
                stored.record(RulesVersion(version: number, deployedAt: now, format: deployment.format, source: deployment.source))
                histories[name] = stored.versions
            }
            completion(result)
        }
    }

    /// Reads `name`'s rules from storage again (another server deployed some) and applies them when they
    /// are newer than what this server has: storage off the loop, the rules on it.
    func reloadRules(_ name: String, now: @escaping () -> Int64) {
        guard let namespace = namespaces[name] else { return }  // read when it opens
        let rules = rules
        onMaintenance({ Result { try rules.load(name) } }) { [self] result in
            guard namespaces[name] === namespace else { return }
            guard case .success(let stored) = result else {
                if case .failure(let error) = result { log("hearth: the rules of '\(name)' deployed elsewhere could not be read (\(error)); they apply here after a restart.") }
                return
            }
            guard let newest = stored.versions.last?.version, newest > (histories[name]?.last?.version ?? 0) else { return }
            histories[name] = stored.versions
            namespace.replaceRules(ruleSet(name, stored.rules).rules, now: now())
        }
    }

    /// `namespace`'s deployed rules versions, oldest first, as read when it opened and deployed since
    /// (none when it is not open).
    func history(_ namespace: String) -> [RulesVersion] { histories[namespace] ?? [] }

    /// A namespace's rules until some are deployed: open in emulator mode (as Firebase's emulator),
    /// locked otherwise (as a new Firebase project in locked mode).
    static func defaultRules(emulator: Bool) -> RuleSet {
        let source = emulator
            ? "{\n  \"rules\": {\n    \".read\": true,\n    \".write\": true\n  }\n}\n"
            : "{\n  \"rules\": {\n    \".read\": false,\n    \".write\": false\n  }\n}\n"
        do { return try RuleSet(source: source) } catch { preconditionFailure("default rules do not compile: \(error)") }
    }
}

/// The namespace a database's remote commits are published to: carried by the engine's thread to the
/// loop, and only dereferenced there (the database's finisher runs on the loop). Weak, as the engine
/// outlives a deleted namespace by the time it takes to close.
private final class FollowingNamespace: @unchecked Sendable {
    weak var namespace: Namespace?
    init(_ namespace: Namespace) { self.namespace = namespace }
}

/// The namespace loads running off the loop: ``NamespaceRegistry/close()`` waits for them to end and
/// closes the engines they opened that the loop never took.
private final class OffLoopLoads: @unchecked Sendable {
    // Every var under `lock`: loads hold and the loop takes from their own threads.
    private let running = DispatchGroup()
    private let lock = NSLock()
    private var engines: [Int: any StorageEngine] = [:]
    private var nextToken = 0

    func started() { running.enter() }
    func ended() { running.leave() }

    /// Keeps `engine` until the loop takes it; returns the token to take it with.
    func hold(_ engine: any StorageEngine) -> Int {
        lock.withLock {
            nextToken += 1
            engines[nextToken] = engine
            return nextToken
        }
    }

    /// The engine held under `token`, or nil when ``finish()`` closed it.
    func take(_ token: Int) -> (any StorageEngine)? { lock.withLock { engines.removeValue(forKey: token) } }

    /// Waits for every load to end, then closes the engines nobody took.
    func finish() {
        running.wait()
        let left = lock.withLock {
            defer { engines.removeAll() }
            return Array(engines.values)
        }
        for engine in left { engine.close() }
    }
}
