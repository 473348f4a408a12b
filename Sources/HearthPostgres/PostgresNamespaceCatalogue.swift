import Foundation
public import HearthStorage
public import HearthSupport
import Synchronization

/// Which namespaces a PostgreSQL database holds and how large each is, answered from memory, so the
/// server's event loop can ask at any time without waiting on the network (a query there could wait
/// seconds for a PostgreSQL that stopped answering, and one request must never stall the server).
///
/// A thread of its own (`hearth.catalogue`) keeps the answers fresh, on a connection it owns:
/// - the names (`hearth_namespaces`) every ``namesInterval`` (5 s), and at once after this process
///   created or deleted a namespace (which also change the answers right away);
/// - the bytes (`PostgresSchema.measureNamespaceBytes`, one sequential scan of `hearth_records`, about
///   0.3 s per million records on one core) no more often than every ``namesInterval`` and never more
///   than 1% of the time: after a measurement that took `d`, the next waits at least `100 × d`.
///
/// A namespace created by another process shows at the next names refresh; until then it is unknown
/// here. While PostgreSQL cannot be reached the last answers stay, the failure is logged once, and its
/// return is logged too.
///
///     let catalogue = try PostgresNamespaceCatalogue(url: url, log: .standardError)  // first answers, or throws
///     catalogue.contains("shop"); catalogue.bytes("shop"); catalogue.names()         // memory only
///     try catalogue.register("shop")                                                 // waits for PostgreSQL
public final class PostgresNamespaceCatalogue: Sendable {
    /// The database, named without its password.
    public var endpoint: PostgresEndpoint { namespaces.endpoint }
    /// How often the names are read again (and the shortest wait between two byte measurements).
    public let namesInterval: Duration

    private let namespaces: PostgresNamespaces
    private let log: Log
    private let state: Mutex<Answers>
    /// Wakes the refreshing thread early (after a local change, or to end it).
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled by the refreshing thread when it has closed its connection and ended.
    private let finished = DispatchSemaphore(value: 0)
    /// Refreshes tried by the thread, whether they read anything or failed: tests wait for more of
    /// them instead of for time.
    let refreshesTried = Atomic<Int>(0)

    /// What the catalogue answers, and what the refreshing thread needs to know about it.
    struct Answers: Sendable {
        var names: Set<String> = []
        var bytes: [String: Int] = [:]
        /// Counts this process's registrations and deletions: a refresh that began before one of them
        /// read a list that may lack it (or still hold it), so its answer is dropped and read again.
        var localChanges = 0
        /// When the bytes are measured next.
        var bytesDue = ContinuousClock.now
        /// False after a refresh failed, until one succeeds: failures are logged once.
        var reachable = true
        var closed = false
    }

    /// Reads the names and bytes once, here and now, then starts the thread that keeps them fresh.
    ///
    /// - Throws: ``StorageError`` when `url` is no PostgreSQL URL or PostgreSQL cannot be used (not
    ///   reachable, a wrong password, tables of a newer Hearth): the message names the server without
    ///   its password and says what to check.
    public init(url: String, log: Log = .silent, namesInterval: Duration = .seconds(5)) throws(StorageError) {
        namespaces = try PostgresNamespaces(url: url)
        self.log = log
        self.namesInterval = namesInterval
        state = Mutex(Answers())
        // The first read gets a longer deadline: a server starting beside a loaded PostgreSQL should wait
        // for it rather than exit, while a stopped or unreachable one still fails at once (refused).
        let first = try openConnection(within: Self.startDeadline)
        defer { first.close() }
        do { try refresh(on: first, within: Self.startDeadline) } catch { throw namespaces.endpoint.storageError(error, doing: Self.doing) }
        NamedThread.start("hearth.catalogue") { [self] in
            keepFresh()
            finished.signal()
        }
    }

    /// Stops refreshing and waits for the thread to end (a refresh under way ends first, within its
    /// deadline), so that nothing of it runs while the process exits.
    public func close() {
        let wasClosed = state.withLock { answers in
            defer { answers.closed = true }
            return answers.closed
        }
        guard !wasClosed else { return }
        wake.signal()
        finished.wait()
    }

    // MARK: Answers, from memory (any thread, the event loop included)

    /// Whether `namespace` exists, as last known.
    public func contains(_ namespace: String) -> Bool { state.withLock { $0.names.contains(namespace) } }

    /// Bytes of `namespace`'s data at the last measurement (0 when unknown or empty).
    public func bytes(_ namespace: String) -> Int { state.withLock { $0.names.contains(namespace) ? $0.bytes[namespace] ?? 0 : 0 } }

    /// Every namespace, as last known, sorted.
    public func names() -> [String] { state.withLock { $0.names.sorted() } }

    // MARK: Changes (they wait for PostgreSQL: never on the event loop)

    /// Enters `namespace` in the database's catalogue (nothing happens when it is there) and in this one.
    public func register(_ namespace: String) throws(StorageError) {
        try namespaces.register(namespace)
        noteLocalChange { $0.names.insert(namespace) }
    }

    /// Deletes everything stored for `namespace` (``PostgresNamespaces/delete(_:)``) and forgets it.
    public func delete(_ namespace: String) throws(StorageError) {
        try namespaces.delete(namespace)
        noteLocalChange { answers in
            answers.names.remove(namespace)
            answers.bytes[namespace] = nil
        }
    }

    /// Calls `deleted` (on a thread of the listener's) with the name of every namespace any server
    /// deletes from this database, this one included, once it is gone from the answers here, so that
    /// each server closes it.
    public func observeDeletions(_ deleted: @escaping @Sendable (_ namespace: String) -> Void) {
        PostgresChangeListener.shared(for: endpoint, log: log).observeDeletions { [self] namespace in
            noteLocalChange { answers in
                answers.names.remove(namespace)
                answers.bytes[namespace] = nil
            }
            deleted(namespace)
        }
    }

    private func noteLocalChange(_ change: (inout Answers) -> Void) {
        state.withLock { answers in
            change(&answers)
            answers.localChanges += 1
        }
        wake.signal()
    }

    // MARK: Refreshing (the catalogue's thread)

    private func keepFresh() {
        var connection: PostgresConnection?
        while true {
            _ = wake.wait(timeout: .now() + .milliseconds(Int(min(namesInterval / .milliseconds(1), 86_400_000))))
            if state.withLock({ $0.closed }) { break }
            defer { refreshesTried.add(1, ordering: .relaxed) }
            do {
                let current = try connection ?? openConnection()
                connection = current
                try refresh(on: current)
                let recovered = state.withLock { answers in
                    defer { answers.reachable = true }
                    return !answers.reachable
                }
                if recovered { log("hearth: PostgreSQL at \(endpoint) answers again; the namespace list is up to date.") }
            } catch {
                connection?.close()
                connection = nil
                let first = state.withLock { answers in
                    defer { answers.reachable = false }
                    return answers.reachable
                }
                if first {
                    let message = namespaces.endpoint.storageError(error, doing: Self.doing)
                    log("hearth: \(message) Serving the last known namespace list until PostgreSQL answers; retrying every \(namesInterval).")
                }
            }
        }
        connection?.close()
    }

    private static let doing = "reading the namespace catalogue"

    /// A connection for the calling thread's refreshes, set up for background scans.
    /// Longest the reads at start may take (later ones: `PostgresTimeouts.commit`).
    static let startDeadline: Duration = .seconds(30)

    private func openConnection(within deadline: Duration = PostgresTimeouts.commit) throws(StorageError) -> PostgresConnection {
        let connection = try namespaces.endpoint.connectPrepared(doing: Self.doing)
        do {
            _ = try connection.run(PostgresSchema.catalogueSession, deadline: .at(.now + deadline))
        } catch {
            connection.close()
            throw StorageError(error, at: namespaces.endpoint, doing: Self.doing)
        }
        return connection
    }

    /// Reads the names, and the bytes when due, and takes them unless this process changed the
    /// namespaces meanwhile (then reads again at once). The names must come within
    /// `PostgresTimeouts.commit` (a short query: a server that stopped answering is noticed soon); the
    /// scan for the bytes may take long, so it is bounded by silence only.
    private func refresh(on connection: PostgresConnection, within deadline: Duration = PostgresTimeouts.commit) throws {
        while true {
            let (changesBefore, measureBytes) = state.withLock { ($0.localChanges, ContinuousClock.now >= $0.bytesDue) }
            let names = try Self.names(connection.run([PostgresSchema.selectNamespaces], deadline: .at(.now + deadline)))
            var measured: (bytes: [String: Int], took: Duration)?
            if measureBytes {
                let started = ContinuousClock.now
                let results = try connection.run([PostgresSchema.measureNamespaceBytes], deadline: .afterSilence(PostgresTimeouts.silence))
                measured = (try Self.bytes(results), ContinuousClock.now - started)
            }
            let taken = state.withLock { answers in
                guard answers.localChanges == changesBefore else { return false }
                answers.names = names
                if let measured {
                    answers.bytes = measured.bytes
                    answers.bytesDue = .now + max(namesInterval, measured.took * 100)
                }
                return true
            }
            if taken { return }
        }
    }

    private static func names(_ results: [PostgresResult]) throws(StorageError) -> Set<String> {
        guard let result = results.first else { return [] }
        var names: Set<String> = []
        for index in 0..<Int32(clamping: result.rowCount) {
            guard let name = PostgresRow(result: result, index: index).bytes(0).flatMap(PostgresBinary.decodeString) else {
                throw StorageError(.corrupt, "a namespace name in hearth_namespaces does not decode as UTF-8")
            }
            names.insert(name)
        }
        return names
    }

    private static func bytes(_ results: [PostgresResult]) throws(StorageError) -> [String: Int] {
        guard let result = results.first else { return [:] }
        var bytes: [String: Int] = [:]
        for index in 0..<Int32(clamping: result.rowCount) {
            let row = PostgresRow(result: result, index: index)
            guard let name = row.bytes(0).flatMap(PostgresBinary.decodeString), let count = row.bytes(1).flatMap(PostgresBinary.decodeInt64) else {
                throw StorageError(.corrupt, "a namespace's size from hearth_records does not decode")
            }
            bytes[name] = Int(clamping: count)
        }
        return bytes
    }
}
