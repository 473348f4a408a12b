import HearthPostgres
import HearthServer
import HearthStorage

/// The server's ``OnDisconnectLedger`` over PostgreSQL's leases: the operations travel as the text
/// HearthServer makes of them, which HearthPostgres stores without reading.
final class PostgresOnDisconnectLedger: OnDisconnectLedger {
    private let leases: PostgresDisconnectLeases

    init(_ leases: PostgresDisconnectLeases) { self.leases = leases }

    func record(session: String, namespace: String, operations: [OnDisconnectRecord]) {
        leases.record(session: session, namespace: namespace, operations: operations.isEmpty ? nil : OnDisconnectRecord.encode(operations))
    }

    func start(orphans: @escaping @Sendable (String, LedgerEntry, [OnDisconnectRecord]) -> Void, leaseLost: @escaping @Sendable () -> Void) {
        leases.start(orphans: { [leases] namespace, claim, text in
            // A row hearth did not write is dropped rather than guessed at.
            guard let records = OnDisconnectRecord.decode(text) else { return leases.drop(claim) }
            orphans(namespace, claim, records)
        }, leaseLost: leaseLost)
    }

    func take(_ key: String, _ completion: @escaping @Sendable (LedgerEntry?) -> Void) {
        leases.take(key, completion)
    }

    func drop(_ claim: LedgerEntry) { leases.drop(claim) }

    func stop() { leases.stop() }
}
