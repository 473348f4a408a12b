import HearthPostgres
import HearthServer

/// The server's ``OnDisconnectLedger`` over PostgreSQL's leases: the operations travel as the text
/// HearthServer makes of them, which HearthPostgres stores without reading.
final class PostgresOnDisconnectLedger: OnDisconnectLedger {
    private let leases: PostgresDisconnectLeases

    init(_ leases: PostgresDisconnectLeases) { self.leases = leases }

    func record(session: String, namespace: String, operations: [OnDisconnectRecord]) {
        leases.record(session: session, namespace: namespace, operations: operations.isEmpty ? nil : OnDisconnectRecord.encode(operations))
    }

    func start(orphans: @escaping @Sendable (String, [OnDisconnectRecord]) -> Void) {
        leases.start { namespace, text in
            // A row hearth did not write is left unrun rather than guessed at.
            guard let records = OnDisconnectRecord.decode(text) else { return }
            orphans(namespace, records)
        }
    }

    func stop() { leases.stop() }
}
