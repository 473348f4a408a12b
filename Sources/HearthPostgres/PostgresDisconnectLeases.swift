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
/// that dies after it leaves nothing: the operations run once. A node frozen past its lease and thawed
/// finds its operations run while its clients may still be connected; the lease should be longer than
/// any pause a node may take.
///
/// One thread and one connection; `record` only queues (the loop calls it), and the latest state of each
/// session is what gets written.
public final class PostgresDisconnectLeases: @unchecked Sendable {
    /// How long a lease lasts without renewal: a dead node's operations run within about 1.25 × this.
    public static let defaultLease: Duration = .seconds(20)

    public let node: String
    let endpoint: PostgresEndpoint
    let lease: Duration
    private let log: Log

    // Protected by `condition`.
    private let condition = NSCondition()
    /// Each session's latest operations (nil: forget it), oldest change first.
    private var pending: [String: (namespace: String, operations: String?)] = [:]
    private var orphans: (@Sendable (String, LedgerEntry, String) -> Void)?
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
        self.node = node + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
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

    /// Takes the lease and starts renewing it; `orphans` gets the namespace, the claimed row and the
    /// operations of each connection of a dead node. The write that runs them carries the row out
    /// (``WriteBatch/carriesOut``); operations that will not run are given back to ``drop(_:)``.
    public func start(orphans: @escaping @Sendable (_ namespace: String, _ claim: LedgerEntry, _ operations: String) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        guard !started else { return }
        started = true
        self.orphans = orphans
        NamedThread.start("hearth.postgres.leases") { [self] in run() }
    }

    /// Forgets a claimed row whose operations will not run (the rules refused them).
    public func drop(_ claim: LedgerEntry) {
        guard claim.owner == node else { return }
        record(session: claim.key, namespace: "", operations: nil)
    }

    /// Writes what is queued, gives the lease up and forgets this node's own connections' rows (they have
    /// run their operations), waiting at most a few seconds. Rows it claimed and has not carried out stay,
    /// for another node to claim.
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
        defer { finished.signal() }
        while true {
            condition.lock()
            while pending.isEmpty && !stopping && ContinuousClock.now < nextRenewal {
                _ = condition.wait(until: Date(timeIntervalSinceNow: Self.seconds(ContinuousClock.now.duration(to: nextRenewal))))
            }
            if crashed {
                condition.unlock()
                connection?.close()
                return
            }
            let changes = pending
            pending = [:]
            let stop = stopping
            let orphans = orphans
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
                if renew { statements.append(renewal) }
                for (session, change) in changes {
                    if let operations = change.operations, operations != "[]" {
                        statements.append(PostgresStatement(
                            "INSERT INTO hearth_ondisconnect (node, session, namespace, operations) VALUES ($1, $2, $3, $4) ON CONFLICT (node, session) DO UPDATE SET namespace = EXCLUDED.namespace, operations = EXCLUDED.operations",
                            [.text(node), .text(session), .text(change.namespace), .text(operations)]))
                    } else {
                        statements.append(PostgresStatement("DELETE FROM hearth_ondisconnect WHERE node = $1 AND session = $2", [.text(node), .text(session)]))
                    }
                }
                if stop {
                    statements.append(PostgresStatement(
                        "DELETE FROM hearth_ondisconnect WHERE node = $1 AND session NOT LIKE 'claimed %'", [.text(node)]))
                    statements.append(PostgresStatement("DELETE FROM hearth_nodes WHERE node = $1", [.text(node)]))
                }
                if !statements.isEmpty { _ = try connection.run(statements, deadline: .at(.now + PostgresTimeouts.commit)) }
                if stop {
                    connection.close()
                    return
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
                let stop = stopping
                condition.unlock()
                if stop { return }
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
    }

    private var renewal: PostgresStatement {
        PostgresStatement(
            "INSERT INTO hearth_nodes (node, expires_at) VALUES ($1, now() + $2 * interval '1 millisecond') ON CONFLICT (node) DO UPDATE SET expires_at = EXCLUDED.expires_at",
            [.text(node), .int8(Int64(lease.components.seconds) * 1000 + lease.components.attoseconds / 1_000_000_000_000_000)])
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

    /// Removes `entries` (claimed rows whose operations a write carried out), in that write's commit.
    static func remove(_ entries: [LedgerEntry]) -> PostgresStatement {
        var owners = PostgresBinary.ArrayEncoder(of: .text)
        var keys = PostgresBinary.ArrayEncoder(of: .text)
        for entry in entries {
            owners.append(Array(entry.owner.utf8))
            keys.append(Array(entry.key.utf8))
        }
        return PostgresStatement(
            "DELETE FROM hearth_ondisconnect WHERE (node, session) IN (SELECT * FROM unnest($1::text[], $2::text[]))",
            [.array(.textArray, owners.finish()), .array(.textArray, keys.finish())])
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
