import HearthStorage

/// The change feed in PostgreSQL (docs/feed.md): one `hearth_feed` row per commit that recorded writes,
/// keyed by the commit's change-log sequence, so the feed has PostgreSQL's one commit order for every
/// node of a cluster, and a position names the same entry on all of them.
///
///     hearth_feed (namespace, seq, time, count, entries, upto)    -- entries: ChangeFeedRows' blob
///
/// `upto` is the bytes of the namespace's entries up to and including the row (a running total from its
/// first row), so retention finds how much is newer than a row from two rows, not by summing them all.
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
                upto bigint NOT NULL DEFAULT 0,
                PRIMARY KEY (namespace, seq)
            )
            """),
        PostgresStatement("CREATE TABLE IF NOT EXISTS hearth_feed_trimmed (namespace text PRIMARY KEY, through bigint NOT NULL)"),
    ]

    /// A commit's entries, in its transaction (after its change-log row, which fences the sequence, so
    /// the newest row read for `upto` is the commit before it).
    static func appendFeed(namespace: String, sequence: Int64, time: Int64, count: Int, entries: [UInt8]) -> PostgresStatement {
        PostgresStatement(
            """
            INSERT INTO hearth_feed (namespace, seq, time, count, entries, upto) VALUES ($1, $2, $3, $4, $5,
                octet_length($5) + coalesce((SELECT upto FROM hearth_feed WHERE namespace = $1 ORDER BY seq DESC LIMIT 1), 0))
            """,
            [.text(namespace), .int8(sequence), .int8(time), .int8(Int64(count)), .bytea(entries)])
    }

    /// Layout 3's rows get their running totals (the 3 → 4 migration).
    static let addFeedRunningTotals: [PostgresStatement] = [
        PostgresStatement("ALTER TABLE hearth_feed ADD COLUMN IF NOT EXISTS upto bigint NOT NULL DEFAULT 0"),
        PostgresStatement("""
            UPDATE hearth_feed AS f SET upto = totals.upto
            FROM (SELECT namespace, seq, sum(octet_length(entries)) OVER (PARTITION BY namespace ORDER BY seq) AS upto FROM hearth_feed) AS totals
            WHERE f.namespace = totals.namespace AND f.seq = totals.seq AND f.upto = 0
            """),
    ]

    /// Rows one trim looks at, from the oldest: it runs every `PostgresWriter.feedTrimInterval` commits,
    /// each adding at most one row, so this keeps up, and a trim costs the same however long the feed.
    static let trimRowsMax = 1_000

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

    /// Deletes, among the oldest `trimRowsMax` rows, those older than `before` (ms) or beyond the newest
    /// `maxBytes` (the bytes of a row and every newer one: the newest row's running total less the row's
    /// own, plus its size), and every row before them; records the last position deleted. Reads the two
    /// ends of the primary key, never the whole feed (summing it every trim made each commit that ran one
    /// slower as the feed grew: the soak's write p99 rose 6 ms a minute).
    static func trimFeed(namespace: String, before time: Int64, maxBytes: Int64) -> PostgresStatement {
        PostgresStatement(
            """
            WITH newest AS (
                SELECT upto FROM hearth_feed WHERE namespace = $1 ORDER BY seq DESC LIMIT 1
            ), oldest AS (
                SELECT seq, time, upto, octet_length(entries) AS bytes FROM hearth_feed WHERE namespace = $1 ORDER BY seq LIMIT \(trimRowsMax)
            ), cut AS (
                SELECT coalesce(max(oldest.seq), 0) AS seq FROM oldest, newest
                WHERE oldest.time < $2 OR newest.upto - oldest.upto + oldest.bytes > $3
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

extension PostgresResult {
    /// Row `index` of a `SELECT seq, count::bigint, entries FROM hearth_feed …`: the commit's number, its
    /// entry count and its entries (valid while the result lives).
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) when a column does not decode.
    func feedRow(_ index: Int32, of namespace: String, at endpoint: PostgresEndpoint) throws(StorageError) -> (number: Int64, count: Int, bytes: UnsafeRawBufferPointer) {
        let row = PostgresRow(result: self, index: index)
        guard let number = row.bytes(0).flatMap(PostgresBinary.decodeInt64), let count = row.bytes(1).flatMap(PostgresBinary.decodeInt64),
              let bytes = row.bytes(2)
        else { throw StorageError(.corrupt, "a change-feed row of namespace '\(namespace)' at \(endpoint) does not decode.") }
        return (number, Int(clamping: count), UnsafeRawBufferPointer(bytes))
    }
}
