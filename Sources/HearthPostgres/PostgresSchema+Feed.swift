import HearthStorage

/// The change feed in PostgreSQL (docs/feed.md): one `hearth_feed` row per commit that recorded writes,
/// keyed by the commit's change-log sequence, so the feed has PostgreSQL's one commit order for every
/// node of a cluster, and a position names the same entry on all of them.
///
///     hearth_feed (namespace, seq, time, count, entries)    -- entries: ChangeFeedRows' blob
///     hearth_feed_trimmed (namespace, through)              -- the last position retention removed
extension PostgresSchema {
    static let createFeed: [PostgresStatement] = [
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_feed (
                namespace text NOT NULL,
                seq bigint NOT NULL,
                time bigint NOT NULL,
                count integer NOT NULL,
                entries bytea NOT NULL,
                PRIMARY KEY (namespace, seq)
            )
            """),
        PostgresStatement("CREATE TABLE IF NOT EXISTS hearth_feed_trimmed (namespace text PRIMARY KEY, through bigint NOT NULL)"),
    ]

    /// A commit's entries, in its transaction (after its change-log row, which fences the sequence).
    static func appendFeed(namespace: String, sequence: Int64, time: Int64, count: Int, entries: [UInt8]) -> PostgresStatement {
        PostgresStatement(
            "INSERT INTO hearth_feed (namespace, seq, time, count, entries) VALUES ($1, $2, $3, $4, $5)",
            [.text(namespace), .int8(sequence), .int8(time), .int8(Int64(count)), .bytea(entries)])
    }

    /// Rows from commit `sequence` on, oldest first.
    static func feedRows(namespace: String, from sequence: Int64, limit: Int) -> PostgresStatement {
        PostgresStatement(
            "SELECT seq, count::bigint, entries FROM hearth_feed WHERE namespace = $1 AND seq >= $2 ORDER BY seq LIMIT \(limit)",
            [.text(namespace), .int8(sequence)])
    }

    /// The newest row's commit number and entry count (no row: an empty feed).
    static func feedNewest(namespace: String) -> PostgresStatement {
        PostgresStatement(
            "SELECT seq, count::bigint FROM hearth_feed WHERE namespace = $1 ORDER BY seq DESC LIMIT 1", [.text(namespace)])
    }

    static func feedTrimmed(namespace: String) -> PostgresStatement {
        PostgresStatement(
            "SELECT coalesce((SELECT through FROM hearth_feed_trimmed WHERE namespace = $1), 0)", [.text(namespace)])
    }

    /// Deletes the oldest rows that are older than `before` (ms) or beyond the newest `maxBytes`, and
    /// records the last position deleted.
    static func trimFeed(namespace: String, before time: Int64, maxBytes: Int64) -> PostgresStatement {
        PostgresStatement(
            """
            WITH cut AS (
                SELECT greatest(
                    coalesce((SELECT max(seq) FROM hearth_feed WHERE namespace = $1 AND time < $2), 0),
                    coalesce((SELECT max(seq) FROM (
                        SELECT seq, sum(octet_length(entries)) OVER (ORDER BY seq DESC) AS newer
                        FROM hearth_feed WHERE namespace = $1) AS sized WHERE newer > $3), 0)) AS seq
            ), gone AS (
                DELETE FROM hearth_feed AS f USING cut WHERE f.namespace = $1 AND f.seq <= cut.seq RETURNING f.seq, f.count
            )
            INSERT INTO hearth_feed_trimmed (namespace, through)
                SELECT $1, (seq << \(ChangeFeedPosition.indexBits)) + count - 1 FROM gone ORDER BY seq DESC LIMIT 1
            ON CONFLICT (namespace) DO UPDATE SET through = greatest(hearth_feed_trimmed.through, excluded.through)
            """,
            [.text(namespace), .int8(time), .int8(maxBytes)])
    }

    /// An import replaced the data at `sequence`: every entry goes, and every position up to it counts as
    /// trimmed, so that readers resync.
    static func clearFeed(namespace: String, through sequence: Int64) -> [PostgresStatement] {
        let through = ChangeFeedPosition.of(commit: sequence, index: ChangeFeedPosition.entriesPerCommitMax - 1)
        return [
            PostgresStatement("DELETE FROM hearth_feed WHERE namespace = $1", [.text(namespace)]),
            PostgresStatement(
                """
                INSERT INTO hearth_feed_trimmed (namespace, through) VALUES ($1, $2)
                ON CONFLICT (namespace) DO UPDATE SET through = greatest(hearth_feed_trimmed.through, excluded.through)
                """, [.text(namespace), .int8(through)]),
        ]
    }
}
