public import HearthStorage
public import HearthSupport
import Foundation
import Synchronization

/// A node's lease in a cluster and the onDisconnect operations of its connections, in PostgreSQL, so
/// that when a node dies (its lease runs out) exactly one other node takes its operations and runs them
/// (docs/scaling.md). The operations are opaque text here (HearthServer encodes them).
///
///     hearth_nodes(node, expires_at)                          one row per live node, renewed every lease/4
///     hearth_ondisconnect(node, session, namespace, operations)   one row per connection with operations
///
/// A node that stops renewing (killed, frozen, cut off) is dead once `expires_at` passes; the node whose
/// claim deletes its `hearth_nodes` row takes its rows in the same statement, so no two nodes run them.
/// Taking a row moves it to the claimant (session `claimed <node> <session>`) rather than deleting it:
/// the write that runs its operations removes it in the same commit (``LedgerEntry``,
/// ``remove(_:)``), so a claimant that dies before that commit leaves the row for the next node, and one
/// that dies after it leaves nothing: the operations run once.
///
/// A node runs its own connection's operations the same way: it first takes the row (``take(_:_:)``,
/// session `running <session>`), which succeeds only while its lease holds, and the write removes it;
/// a claimed row, and one whose write is tried again, is taken again (confirmed) before each write. A
/// node frozen or cut off past its lease finds, when it renews, that its row is gone (renewal never
/// recreates it): its rows were claimed and run by another node, so it takes a new name and lease, and
/// its server closes the connections it had (``start(orphans:leaseLost:)``), whose rows another node ran.
/// A node stopped cleanly gives its lease up and leaves the rows of connections it did not get to run to
/// the others (or to its own next start).
///
/// One thread and one connection; `record` only queues (the loop calls it), and the latest state of each
/// session is what gets written.
public final class PostgresDisconnectLeases: @unchecked Sendable {
    /// How long a lease lasts without renewal: a dead node's operations run within about 1.25 × this.
    public static let defaultLease: Duration = .seconds(20)

    /// This node's name in the cluster now (a new one after a lost lease).
    public var node: String {
        condition.lock()
        defer { condition.unlock() }
        return current
    }
    /// `node`'s value; written by the thread alone, read under `condition`.
    private var current: String
    private let baseName: String
    let endpoint: PostgresEndpoint
    let lease: Duration
    private let log: Log

    // Protected by `condition`.
    private let condition = NSCondition()
    /// Each session's latest operations (nil: forget it), oldest change first.
    private var pending: [String: (namespace: String, operations: String?)] = [:]
    private var orphans: (@Sendable (String, LedgerEntry, String) -> Void)?
    private var leaseLost: (@Sendable () -> Void)?
    /// Sessions whose rows are to be taken to run their operations here, in the order asked.
    private var takes: [(key: String, completion: @Sendable (LedgerEntry?) -> Void)] = []
    private var stopping = false
    /// Tests: the thread ends at once, writing nothing, as if the process had been killed.
    private var crashed = false
    private let finished = DispatchSemaphore(value: 0)
    /// Claims of dead nodes' rows this node has made (each a statement that may find nothing): tests wait
    /// for more of them instead of for time.
    let claimsMade = Atomic<Int>(0)
    private var started = false

    /// `node` names this process among the cluster's (made unique here, so a restarted node is a new one
    /// and its predecessor's operations are taken like any dead node's).
    public init(url: String, node: String, lease: Duration = defaultLease, log: Log) throws(StorageError) {
        endpoint = try PostgresEndpoint(url: url)
        baseName = node
        current = Self.uniqueName(node)
        self.lease = lease
        self.log = log
    }

    /// Queues `operations` (nil or empty: none) as what connection `session` of `namespace` would run.
    public func record(session: String, namespace: String, operations: String?) {
        condition.lock()
        pending[session] = (namespace, operations)
        condition.signal()
        condition.unlock()
    }

    private static func uniqueName(_ base: String) -> String {
        base + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }

    /// Takes the lease and starts renewing it; `orphans` gets the namespace, the claimed row and the
    /// operations of each connection of a dead node. The write that runs them carries the row out
    /// (``WriteBatch/carriesOut``); operations that will not run are given back to ``drop(_:)``.
    /// `leaseLost` hears (on this type's thread) that the lease ran out and the rows of this node's
    /// connections were claimed by others: the connections open before it should be closed.
    public func start(
        orphans: @escaping @Sendable (_ namespace: String, _ claim: LedgerEntry, _ operations: String) -> Void,
        leaseLost: @escaping @Sendable () -> Void = {}
    ) {
        condition.lock()
        defer { condition.unlock() }
        guard !started else { return }
        started = true
        self.orphans = orphans
        self.leaseLost = leaseLost
        NamedThread.start("hearth.postgres.leases") { [self] in run() }
    }

    /// Takes a row so that its operations run here, once, just before the write that runs them:
    /// `key` is a connection's session (its row becomes `running <session>`), or the key of an entry this
    /// node holds (a claimed row, a row taken before), confirmed as still this node's. `completion` (on
    /// this type's thread) gets the entry the write carries out, or nil when the operations are not to
    /// run here (another node claimed them when this node's lease ran out, or nothing was recorded).
    /// Waits for what is queued for the session to be written first; while the lease has run out but
    /// no other node has claimed the row yet, waits for the next renewal to tell which it is.
    public func take(_ key: String, _ completion: @escaping @Sendable (LedgerEntry?) -> Void) {
        condition.lock()
        takes.append((key, completion))
        condition.signal()
        condition.unlock()
    }

    /// Forgets a claimed row whose operations will not run (the rules refused them).
    public func drop(_ claim: LedgerEntry) {
        guard claim.owner == node else { return }
        record(session: claim.key, namespace: "", operations: nil)
    }

    /// Writes what is queued and gives the lease up, waiting at most a few seconds. Rows still here (a
    /// connection whose operations did not run, a claim not carried out) stay, for another node to claim.
    public func stop() {
        condition.lock()
        let wasStarted = started
        stopping = true
        condition.signal()
        condition.unlock()
        if wasStarted { _ = finished.wait(timeout: .now() + .seconds(10)) }
    }

    /// Tests: stops renewing and writing at once, leaving the rows behind, as a killed node does.
    func crashForTesting() {
        condition.lock()
        crashed = true
        stopping = true
        condition.signal()
        condition.unlock()
    }

    // MARK: The thread

    private func run() {
        var connection: PostgresConnection?
        var reportedFailure = false
        let renewEvery = lease / 4
        var nextRenewal = ContinuousClock.now
        // Until the first renewal has written the lease, renewing inserts it; after, it only extends it.
        var hasLease = false
        // Takes that found this node's lease run out but its row not claimed: decided after the renewal.
        var waitingForRenewal: [(key: String, completion: @Sendable (LedgerEntry?) -> Void)] = []
        defer { finished.signal() }
        while true {
            condition.lock()
            while pending.isEmpty && takes.isEmpty && !stopping && ContinuousClock.now < nextRenewal {
                _ = condition.wait(until: Date(timeIntervalSinceNow: Self.seconds(ContinuousClock.now.duration(to: nextRenewal))))
            }
            if crashed {
                condition.unlock()
                connection?.close()
                return
            }
            let changes = pending
            pending = [:]
            var taking = takes
            takes = []
            let stop = stopping
            let orphans = orphans
            let node = current
            condition.unlock()
            do throws(PostgresError) {
                if connection == nil {
                    let fresh = try PostgresConnection(endpoint, deadline: .now + PostgresTimeouts.connect)
                    _ = try fresh.run(Self.create, deadline: .at(.now + PostgresTimeouts.commit))
                    connection = fresh
                }
                guard let connection else { continue }
                var statements: [PostgresStatement] = []
                let renew = ContinuousClock.now >= nextRenewal
                if renew { statements.append(renewal(node, extending: hasLease)) }
                for (session, change) in changes {
                    if let operations = change.operations, operations != "[]" {
                        statements.append(PostgresStatement(
                            "INSERT INTO hearth_ondisconnect (node, session, namespace, operations) VALUES ($1, $2, $3, $4) ON CONFLICT (node, session) DO UPDATE SET namespace = EXCLUDED.namespace, operations = EXCLUDED.operations",
                            [.text(node), .text(session), .text(change.namespace), .text(operations)]))
                    } else {
                        statements.append(PostgresStatement("DELETE FROM hearth_ondisconnect WHERE node = $1 AND session = $2", [.text(node), .text(session)]))
                    }
                }
                if stop { statements.append(PostgresStatement("DELETE FROM hearth_nodes WHERE node = $1", [.text(node)])) }
                let results = statements.isEmpty ? [] : try connection.run(statements, deadline: .at(.now + PostgresTimeouts.commit))
                if stop {
                    connection.close()
                    return
                }
                if renew && hasLease && results.first?.rowCount == 0 {
                    // The row is gone: another node found the lease run out (this node frozen or cut off)
                    // and claimed this node's rows. A new name and lease; the connections go.
                    let renamed = Self.uniqueName(baseName)
                    log("hearth: node \(node)'s cluster lease ran out (paused or cut off from PostgreSQL for longer than the lease): other nodes ran its connections' onDisconnect operations. Closing those connections so their clients reconnect; serving on as \(renamed).")
                    _ = try connection.run([Self.firstLease(renamed, lease)], deadline: .at(.now + PostgresTimeouts.commit))
                    condition.lock()
                    current = renamed
                    let lost = leaseLost
                    condition.unlock()
                    lost?()
                    // Taken with the new name below: sessions recorded before it were claimed with the old.
                }
                if renew { hasLease = true }
                if renew {
                    taking = waitingForRenewal + taking
                    waitingForRenewal = []
                }
                if !taking.isEmpty {
                    let results = try connection.run(taking.map { Self.take(node: node, key: $0.key) }, deadline: .at(.now + PostgresTimeouts.commit))
                    for (index, request) in taking.enumerated() {
                        switch index < results.count ? Self.outcome(of: results[index]) : .gone {
                        case .taken(let key): request.completion(LedgerEntry(owner: node, key: key))
                        case .gone: request.completion(nil)
                        case .leaseLapsed: waitingForRenewal.append(request)
                        }
                    }
                }
                if renew {
                    nextRenewal = .now + renewEvery
                    // Claimed in its own transaction, after the renewal has committed.
                    let claimed = try connection.run([claim], deadline: .at(.now + PostgresTimeouts.commit))
                    defer { claimsMade.add(1, ordering: .relaxed) }
                    if let orphans, let result = claimed.first {
                        for index in 0..<Int32(clamping: result.rowCount) {
                            let row = PostgresRow(result: result, index: index)
                            guard let namespace = row.bytes(0).flatMap(PostgresBinary.decodeString),
                                let session = row.bytes(1).flatMap(PostgresBinary.decodeString),
                                let operations = row.bytes(2).flatMap(PostgresBinary.decodeString)
                            else { continue }
                            orphans(namespace, LedgerEntry(owner: node, key: session), operations)
                        }
                    }
                }
                if reportedFailure { log("hearth: the cluster lease of node \(node) at \(endpoint) is renewed again.") }
                reportedFailure = false
            } catch {
                connection?.close()
                connection = nil
                if !reportedFailure {
                    log("hearth: cannot renew the cluster lease of node \(node) at \(endpoint) (\(error)); retrying. If it runs out, other nodes run this node's onDisconnect operations.")
                    reportedFailure = true
                }
                // What was not written is written on the next try, unless a newer state replaced it.
                condition.lock()
                for (session, change) in changes where pending[session] == nil { pending[session] = change }
                takes = taking + takes
                let stop = stopping
                condition.unlock()
                if stop { return }
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
    }

    /// Extends the lease (`RETURNING`: no row when it was lost); the first one of a name inserts it. A
    /// lost lease is never recreated under the same name: another node claimed that name's rows.
    private func renewal(_ node: String, extending: Bool) -> PostgresStatement {
        PostgresStatement(
            extending ? "UPDATE hearth_nodes SET expires_at = now() + $2 * interval '1 millisecond' WHERE node = $1 RETURNING 1"
                : "INSERT INTO hearth_nodes (node, expires_at) VALUES ($1, now() + $2 * interval '1 millisecond') ON CONFLICT (node) DO UPDATE SET expires_at = EXCLUDED.expires_at RETURNING 1",
            [.text(node), .int8(Self.milliseconds(lease))])
    }

    private static func firstLease(_ node: String, _ lease: Duration) -> PostgresStatement {
        PostgresStatement(
            "INSERT INTO hearth_nodes (node, expires_at) VALUES ($1, now() + $2 * interval '1 millisecond')",
            [.text(node), .int8(milliseconds(lease))])
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        Int64(duration.components.seconds) * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// Takes row `key` of this node while its lease holds: a connection's session becomes
    /// `running <session>`; a `running …` or `claimed …` row keeps its key. A session already taken
    /// (`running <key>`: a take whose answer was lost with its connection) is taken again. Answers the
    /// key it has now (taken), and whether the row is there at all (not taken but there: the lease ran
    /// out, and no other node claimed the row yet).
    private static func take(node: String, key: String) -> PostgresStatement {
        PostgresStatement(
            """
            WITH taken AS (
                UPDATE hearth_ondisconnect
                SET session = CASE WHEN session LIKE 'running %' OR session LIKE 'claimed %' THEN session ELSE 'running ' || session END
                WHERE node = $1 AND (session = $2 OR session = 'running ' || $2)
                    AND EXISTS (SELECT 1 FROM hearth_nodes WHERE node = $1 AND expires_at > now())
                RETURNING session)
            SELECT (SELECT session FROM taken LIMIT 1),
                EXISTS (SELECT 1 FROM hearth_ondisconnect WHERE node = $1 AND (session = $2 OR session = 'running ' || $2))
            """, [.text(node), .text(key)])
    }

    enum TakeOutcome: Equatable {
        case taken(key: String)
        /// Not this node's (claimed by another) or never recorded.
        case gone
        /// Still this node's row, but its lease has run out: the next renewal tells whether it was lost.
        case leaseLapsed
    }

    static func outcome(of result: PostgresResult) -> TakeOutcome {
        guard let row = result.firstValue else { return .gone }
        if let key = row.bytes(0).flatMap(PostgresBinary.decodeString) { return .taken(key: key) }
        return row.bytes(1).flatMap(PostgresBinary.decodeBoolean) == true ? .leaseLapsed : .gone
    }

    /// Moves the rows of dead nodes (a lease past its end, or no lease at all) to this node and returns
    /// them: one statement, so two nodes claiming at once never both get a row (the second finds it
    /// moved to a live node).
    private var claim: PostgresStatement {
        PostgresStatement(
            """
            WITH dead AS (DELETE FROM hearth_nodes WHERE expires_at < now() AND node <> $1 RETURNING node)
            UPDATE hearth_ondisconnect d SET node = $1, session = 'claimed ' || d.node || ' ' || d.session
            WHERE d.node <> $1 AND (d.node IN (SELECT node FROM dead) OR NOT EXISTS (SELECT 1 FROM hearth_nodes n WHERE n.node = d.node))
            RETURNING d.namespace, d.session, d.operations
            """, [.text(node)])
    }

    /// Removes `entries` in the commit of the write that runs their operations, and fails that commit
    /// (SQLSTATE ``takenElsewhereState``) unless every one was still this node's: another node that
    /// claimed one meanwhile (this node's lease ran out while the commit was on its way, delayed by a
    /// pause or a partition) runs its operations, and this commit must not run them too.
    static func carryOut(_ entries: [LedgerEntry]) -> PostgresStatement {
        // The ELSE is reached only then (it reads the count), so it is never folded at planning.
        PostgresStatement(
            """
            WITH gone AS (DELETE FROM hearth_ondisconnect WHERE (node, session) IN (SELECT * FROM unnest($1::text[], $2::text[])) RETURNING 1)
            SELECT CASE WHEN (SELECT count(*) FROM gone) = $3 THEN 0
                ELSE ('onDisconnect records taken by another node: ' || (SELECT count(*) FROM gone))::int END
            """,
            rowKeys(entries) + [.int8(Int64(entries.count))])
    }

    /// How ``carryOut(_:)`` fails: the text it casts to an integer is not one.
    static let takenElsewhereState = "22P02"

    /// Removes `entries` (claimed rows whose operations a write carried out), in that write's commit.
    static func remove(_ entries: [LedgerEntry]) -> PostgresStatement {
        PostgresStatement(
            "DELETE FROM hearth_ondisconnect WHERE (node, session) IN (SELECT * FROM unnest($1::text[], $2::text[]))",
            rowKeys(entries))
    }

    /// The rows' `(node, session)` keys as two text arrays: `$1` and `$2` of the statements above.
    private static func rowKeys(_ entries: [LedgerEntry]) -> [PostgresParameter] {
        var owners = PostgresBinary.ArrayEncoder(of: .text)
        var keys = PostgresBinary.ArrayEncoder(of: .text)
        for entry in entries {
            owners.append(Array(entry.owner.utf8))
            keys.append(Array(entry.key.utf8))
        }
        return [.array(.textArray, owners.finish()), .array(.textArray, keys.finish())]
    }

    static let create: [PostgresStatement] = [
        PostgresStatement("SELECT pg_advisory_xact_lock(\(PostgresSchema.creationLockKey))"),
        PostgresStatement("CREATE TABLE IF NOT EXISTS hearth_nodes (node text PRIMARY KEY, expires_at timestamptz NOT NULL)"),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_ondisconnect (
                node text NOT NULL, session text NOT NULL, namespace text NOT NULL, operations text NOT NULL,
                PRIMARY KEY (node, session))
            """),
    ]

    private static func seconds(_ duration: Duration) -> TimeInterval {
        max(0, Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }
}
