import HearthCore

/// The write IDs (HearthClient's `wid`, docs/protocol.md §2.6.1) each commit applied, written in the
/// commit's transaction: what a server opening the namespace remembers as applied, so that a client
/// resending a write whose answer it lost, to this server or another, does not have it applied twice.
/// Servers already running learn other servers' IDs from the change log, which carries them too
/// (`WriteBatch` encoding, version 3).
///
///     hearth_applied_writes (namespace, seq, write_ids)    -- write_ids: the IDs, space-separated
extension PostgresSchema {
    static let createAppliedWrites = PostgresStatement("""
        CREATE TABLE IF NOT EXISTS hearth_applied_writes (
            namespace text NOT NULL,
            seq bigint NOT NULL,
            write_ids text NOT NULL,
            PRIMARY KEY (namespace, seq)
        )
        """)

    /// A commit's write IDs, in its transaction (after its change-log row, which fences the sequence).
    /// IDs are printable ASCII without spaces (the server refuses others), so a space separates them.
    static func appendAppliedWrites(namespace: String, sequence: Int64, ids: [String]) -> PostgresStatement {
        PostgresStatement(
            "INSERT INTO hearth_applied_writes (namespace, seq, write_ids) VALUES ($1, $2, $3)",
            [.text(namespace), .int8(sequence), .text(ids.joined(separator: " "))])
    }

    /// The rows of the newest `limit` commits after change `sequence` that applied IDs, newest first.
    static func appliedWrites(namespace: String, after sequence: Int64, limit: Int) -> PostgresStatement {
        PostgresStatement(
            "SELECT write_ids FROM hearth_applied_writes WHERE namespace = $1 AND seq > $2 ORDER BY seq DESC LIMIT \(limit)",
            [.text(namespace), .int8(sequence)])
    }

    /// Removes all but the newest `keep` rows: each holds at least one ID, so at least `keep` IDs stay.
    static func trimAppliedWrites(namespace: String, keep: Int) -> PostgresStatement {
        PostgresStatement(
            """
            DELETE FROM hearth_applied_writes WHERE namespace = $1 AND seq <
                (SELECT seq FROM hearth_applied_writes WHERE namespace = $1 ORDER BY seq DESC OFFSET \(keep) LIMIT 1)
            """, [.text(namespace)])
    }
}
