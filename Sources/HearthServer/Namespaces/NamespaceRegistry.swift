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
/// one that does not exist yet, loading large ones off the loop, and their rules files. Loop thread only.
final class NamespaceRegistry: @unchecked Sendable {
    // Sendable only to come back to the loop from a loading thread (`withNamespace`); used on the loop alone.
    private let emulator: Bool
    private let openEngine: @Sendable (String) throws -> any StorageEngine
    /// The namespaces' files: bytes before one is opened (decides where it loads), which exist, removal.
    private let files: NamespaceFiles
    private let rulesStore: RulesStore?
    private let rulesHistory: RulesHistory
    /// Each namespace's deployed versions, loaded from ``rulesHistory`` when first asked for.
    private var histories: [String: [RulesVersion]] = [:]
    private let log: Log
    /// Counts what the namespaces' fan-out delivers.
    let metrics: ServerMetrics?
    private var namespaces: [String: Namespace] = [:]
    /// Namespaces loading off the loop thread, with what waits for each.
    private var loading: [String: [(Result<Namespace, NamespaceUnavailable>) -> Void]] = [:]
    /// Set when the loop starts: large namespaces load on their own thread and come back through it, and
    /// every namespace's durable writes finish on the loop.
    var executor: (any LoopExecutor)?

    /// Database files smaller than this load on the loop thread (a few milliseconds).
    static let backgroundLoadBytesMin = 4 << 20

    init(
        emulator: Bool, rulesDirectory: String?, files: NamespaceFiles = .none, log: Log,
        metrics: ServerMetrics? = nil, openEngine: @escaping @Sendable (String) throws -> any StorageEngine
    ) {
        self.metrics = metrics
        self.emulator = emulator
        self.openEngine = openEngine
        self.files = files
        self.log = log
        rulesStore = rulesDirectory.map(RulesStore.init(directory:))
        rulesHistory = RulesHistory(directory: rulesDirectory)
    }

    subscript(name: String) -> Namespace? { namespaces[name] }

    /// The namespaces opened so far.
    var all: Dictionary<String, Namespace>.Values { namespaces.values }
    var names: [String] { namespaces.keys.sorted() }

    /// Bytes of `name`'s files on disk (0 when unknown).
    func storedBytes(_ name: String) -> Int { files.bytes(name) }

    /// Every namespace stored or open, sorted.
    var knownNames: [String] { Array(Set(files.names()).union(namespaces.keys)).sorted() }

    /// Closes every namespace's engine, waiting for queued commits. Call after the loop has stopped.
    func close() {
        for namespace in namespaces.values { namespace.database.engine.close() }
        namespaces.removeAll()
    }

    /// Whether a caller may open `name`: any valid name in emulator mode (created on first use, as the
    /// emulator does); otherwise one that exists, unless an admin creates it. Strangers cannot make the
    /// server create databases (disk, file descriptors) by naming them.
    func mayOpen(_ name: String, isAdmin: Bool) -> Bool {
        emulator || isAdmin || namespaces[name] != nil || loading[name] != nil || files.bytes(name) > 0
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
        return try adopt(name, Self.openAndLoad(name, openEngine)).get()
    }

    /// Runs `body` with the namespace once it is loaded: at once when it is, else when its load is done.
    /// A namespace whose files hold more than ``backgroundLoadBytesMin`` loads on its own thread, so the
    /// loop keeps serving everyone else meanwhile (a 300 MB database takes seconds); requests for it wait.
    func withNamespace(_ name: String, _ body: @escaping (Result<Namespace, NamespaceUnavailable>) -> Void) {
        if let namespace = namespaces[name] { return body(.success(namespace)) }
        if loading[name] != nil { return loading[name, default: []].append(body) }
        guard NamespaceName.isValid(name) else {
            return body(.failure(NamespaceUnavailable(reason: .invalidName, message: NamespaceName.invalidMessage(name))))
        }
        guard let executor, files.bytes(name) > Self.backgroundLoadBytesMin else {
            return body(adopt(name, Self.openAndLoad(name, openEngine)))
        }
        loading[name] = [body]
        log("hearth: loading namespace '\(name)' (\(files.bytes(name) >> 20) MB)…")
        let openEngine = openEngine
        let thread = Thread {
            let result = Self.openAndLoad(name, openEngine)
            executor.execute { [self] in
                let adopted = adopt(name, result)
                if case .success = adopted { log("hearth: namespace '\(name)' loaded.") }
                for waiter in loading.removeValue(forKey: name) ?? [] { waiter(adopted) }
            }
        }
        thread.name = "hearth.load.\(name)"
        thread.start()
    }

    /// Opens the engine and loads the tree: any thread.
    private static func openAndLoad(
        _ name: String, _ openEngine: (String) throws -> any StorageEngine
    ) -> Result<(any StorageEngine, Node), NamespaceUnavailable> {
        guard NamespaceName.isValid(name) else {
            return .failure(NamespaceUnavailable(reason: .invalidName, message: NamespaceName.invalidMessage(name)))
        }
        do {
            let engine = try openEngine(name)
            return .success((engine, try engine.load(progress: nil)))
        } catch let error as StorageError where error.code == .invalidData {
            return .failure(NamespaceUnavailable(reason: .invalidName, message: NamespaceName.invalidMessage(name)))
        } catch {
            return .failure(NamespaceUnavailable(reason: .cannotOpen, message: "Could not open the database '\(name)': \(error)"))
        }
    }

    /// Makes a loaded engine and tree the namespace `name` (loop thread). Its durable writes finish on
    /// the loop (see `DurableDatabase.init(engine:root:finishOn:)`): their completions answer writers and
    /// tell listeners there anyway.
    private func adopt(_ name: String, _ loaded: Result<(any StorageEngine, Node), NamespaceUnavailable>)
        -> Result<Namespace, NamespaceUnavailable>
    {
        loaded.map { engine, root in
            if let existing = namespaces[name] { return existing }
            let stored = storedRules(name)
            var finisher: DurableDatabase.Finisher?
            if let executor { finisher = { executor.execute($0) } }
            let namespace = Namespace(
                name: name, database: DurableDatabase(engine: engine, root: root, finishOn: finisher), rules: stored.rules,
                rulesDeployed: stored.deployed, metrics: metrics)
            namespaces[name] = namespace
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
        namespace.database.follow { remote in
            guard let namespace = reference.namespace else { return }
            let write: Write = remote.locations.count == 1 ? .set(remote.locations[0]) : .update(.root, remote.locations)
            namespace.publish(CommittedChange(write: write, root: remote.root, changes: remote.changes))
        }
    }

    // MARK: Creating and deleting (the console's Namespaces page)

    /// Whether `name` is being loaded off the loop now.
    func isLoading(_ name: String) -> Bool { loading[name] != nil }

    /// Whether `name` is stored, open or loading.
    func exists(_ name: String) -> Bool { namespaces[name] != nil || loading[name] != nil || files.bytes(name) > 0 }

    /// Deletes a namespace: its clients are told and disconnected (realtime `s`, streams `cancel`), its
    /// engine closed (queued commits finish first), then its files, rules and rules history removed.
    func delete(_ name: String) throws(NamespaceUnavailable) {
        guard loading[name] == nil else {
            throw NamespaceUnavailable(reason: .cannotOpen, message: "'\(name)' is still loading; delete it once it has loaded")
        }
        if let namespace = namespaces.removeValue(forKey: name) {
            for stream in Array(namespace.streams.values) { stream.cancel() }
            for session in Array(namespace.realtimeSessions.values) { session.namespaceDeleted() }
            for feed in Array(namespace.consoleFeeds.values) { feed.finish() }
            namespace.database.engine.close()
        }
        do { try files.delete(name) } catch {
            throw NamespaceUnavailable(reason: .cannotOpen, message: "Could not delete the files of '\(name)': \(error)")
        }
        rulesStore?.delete(name)
        rulesHistory.delete(name)
        histories[name] = nil
        log("hearth: namespace '\(name)' deleted.")
    }

    // MARK: Rules files

    /// The rules uploaded for `name`, else the mode's default (open in emulator mode, locked otherwise).
    /// Stored rules that no longer compile leave the namespace locked, with the reason logged.
    private func storedRules(_ name: String) -> (rules: RuleSet, deployed: Bool) {
        guard let source = rulesStore?.load(name) else { return (Self.defaultRules(emulator: emulator), false) }
        do { return (try RuleSet(source: source), true) } catch {
            log("hearth: the stored rules of '\(name)' do not compile (\(error)); it stays locked until new rules are deployed")
            return (.locked, true)
        }
    }

    /// Stores `source` as `namespace`'s rules, before they apply: no decision is made under rules a
    /// restart would not bring back. Adds a version to the history, with `deployed` as what was deployed
    /// (the Bolt text the JSON `source` was compiled from); returns its number.
    @discardableResult
    func saveRules(_ source: String, for namespace: String, deployed: (RulesVersion.Format, String)? = nil, now: Int64) throws -> Int {
        try rulesStore?.save(source, for: namespace)
        var versions = history(namespace)
        let version = RulesVersion(
            version: (versions.last?.version ?? 0) + 1, deployedAt: now, format: deployed?.0 ?? .json,
            source: deployed?.1 ?? source)
        versions.append(version)
        if versions.count > RulesHistory.versionsMax { versions.removeFirst(versions.count - RulesHistory.versionsMax) }
        histories[namespace] = versions
        // The rules are stored and apply either way; a history that cannot be written is said, not fatal.
        do { try rulesHistory.save(versions, added: version, for: namespace) } catch {
            log("hearth: the rules history of '\(namespace)' could not be written: \(error)")
        }
        return version.version
    }

    /// `namespace`'s deployed rules versions, oldest first.
    func history(_ namespace: String) -> [RulesVersion] {
        if let known = histories[namespace] { return known }
        let loaded = rulesHistory.load(namespace)
        histories[namespace] = loaded
        return loaded
    }

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
