import HearthStorage

/// The change feed indexed by location, for a location's history (docs/feed.md, "History of a
/// location"), as SQLite's `FeedLocations` keeps it, in the tables every namespace shares:
///
///     hearth_feed_locations (namespace, path, position)   -- one row per location an entry wrote
///     hearth_feed_locations_through (namespace, position) -- the last position indexed
///
/// `path` is the location's ``EncodedPath``, so a location's subtree is one range of the primary key.
/// Built lazily by steps (`PostgresFeedLocationStore`), each one transaction under the namespace's
/// advisory lock, so the nodes of a cluster may step at once and index each entry once.
extension PostgresSchema {
    static let createFeedLocations: [PostgresStatement] = [
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_feed_locations (
                namespace text NOT NULL,
                path bytea NOT NULL,
                position bigint NOT NULL,
                PRIMARY KEY (namespace, path, position)
            )
            """),
        // For dropping the rows of entries retention removed.
        PostgresStatement("CREATE INDEX IF NOT EXISTS hearth_feed_locations_position ON hearth_feed_locations (namespace, position)"),
        PostgresStatement("CREATE TABLE IF NOT EXISTS hearth_feed_locations_through (namespace text PRIMARY KEY, position bigint NOT NULL)"),
    ]

    /// First in a step's transaction: the namespace's step lock (the two-key form, so that it shares no
    /// key with the single-key creation lock), then where the index ends and where retention ended.
    static func beginFeedLocationStep(namespace: String) -> [PostgresStatement] {
        [
            PostgresStatement("BEGIN"),
            PostgresStatement("SELECT pg_advisory_xact_lock(\(feedLocationsLockClass), hashtext($1))", [.text(namespace)]),
            feedLocationsThrough(namespace: namespace),
            feedTrimmed(namespace: namespace),
            // Where this step's drop of removed entries' rows ends: the position of the chunk's last row
            // (none: fewer are left than a chunk). A SELECT walks the position index whatever its bound.
            PostgresStatement(
                """
                SELECT position FROM hearth_feed_locations WHERE namespace = $1
                    AND position <= (SELECT coalesce((SELECT through FROM hearth_feed_trimmed WHERE namespace = $1), 0))
                ORDER BY position OFFSET \(FeedLocationLimits.droppedRowsPerStep - 1) LIMIT 1
                """, [.text(namespace)]),
        ]
    }

    /// The rows of entries retention removed. The bound is a parameter, not a subquery: with a bound it
    /// cannot see, the planner guesses a third of the table and scans all of it (a step at 3 million rows
    /// took 120 ms), where the position index finds the few rows at once.
    static func dropTrimmedFeedLocations(namespace: String, through trimmed: Int64) -> PostgresStatement {
        PostgresStatement("DELETE FROM hearth_feed_locations WHERE namespace = $1 AND position <= $2", [.text(namespace), .int8(trimmed)])
    }

    /// The first key of the step lock: 'Hloc' as a number.
    static let feedLocationsLockClass: Int32 = 0x486C_6F63

    /// The last position indexed (0: none).
    static func feedLocationsThrough(namespace: String) -> PostgresStatement {
        PostgresStatement(
            "SELECT coalesce((SELECT position FROM hearth_feed_locations_through WHERE namespace = $1), 0)", [.text(namespace)])
    }

    /// Feed rows from commit `sequence` on, oldest first, while the entries before each row number fewer
    /// than `entries`: a step's worth in whole rows, and one row more to say whether more are left. Row
    /// `sequence` itself, which holds the last entry indexed, is not counted: its entries are indexed
    /// already, and a commit can hold more than a step's worth (8,192 entries against 4,096), which
    /// would leave the rows after it out of every step.
    static func feedRowsForStep(namespace: String, from sequence: Int64, entries: Int) -> PostgresStatement {
        PostgresStatement(
            """
            SELECT seq, count, entries FROM (
                SELECT seq, count::bigint, entries, sum(counted) OVER (ORDER BY seq) - counted AS earlier
                FROM (SELECT seq, count, entries, CASE WHEN seq = $2 THEN 0 ELSE count END AS counted
                      FROM hearth_feed WHERE namespace = $1 AND seq >= $2 ORDER BY seq LIMIT \(entries + 1)) AS next
            ) AS counted WHERE earlier <= \(entries) ORDER BY seq
            """,
            [.text(namespace), .int8(sequence)])
    }

    /// A step's rows and its new end, then the commit.
    static func finishFeedLocationStep(namespace: String, paths: [UInt8], positions: [UInt8], through: Int64) -> [PostgresStatement] {
        [
            PostgresStatement(
                """
                INSERT INTO hearth_feed_locations (namespace, path, position)
                    SELECT $1, path, position FROM unnest($2::bytea[], $3::bigint[]) AS rows(path, position)
                ON CONFLICT DO NOTHING
                """, [.text(namespace), .array(.byteaArray, paths), .array(.int8Array, positions)]),
            PostgresStatement(
                """
                INSERT INTO hearth_feed_locations_through (namespace, position) VALUES ($1, $2)
                ON CONFLICT (namespace) DO UPDATE SET position = greatest(hearth_feed_locations_through.position, excluded.position)
                """, [.text(namespace), .int8(through)]),
            PostgresStatement("COMMIT"),
        ]
    }

    /// How many entries the feed holds after `position`, counted by whole rows, up to about `atMost` (at
    /// most `atMost` rows are read).
    static func feedEntriesAfter(namespace: String, position: Int64, atMost: Int64) -> PostgresStatement {
        PostgresStatement(
            """
            SELECT coalesce(sum(count), 0)::bigint FROM (
                SELECT count FROM hearth_feed WHERE namespace = $1 AND seq >= $2 ORDER BY seq LIMIT $3
            ) AS next
            """, [.text(namespace), .int8(ChangeFeedPosition.commit(of: position)), .int8(atMost)])
    }

    /// The positions in `[low, high)` of the subtree's rows after `trimmed` and below `before`, at most
    /// `limit`.
    static func feedLocationsBelow(namespace: String, low: [UInt8], high: [UInt8], before: Int64, trimmed: Int64, limit: Int) -> PostgresStatement {
        PostgresStatement(
            """
            SELECT position FROM hearth_feed_locations
            WHERE namespace = $1 AND path >= $2 AND path < $3 AND position < $4 AND position > $5 LIMIT \(limit)
            """, [.text(namespace), .bytea(low), .bytea(high), .int8(before), .int8(trimmed)])
    }

    /// Each of `paths`' own newest `limit` positions after `trimmed` and below `before`.
    static func feedLocationsAt(namespace: String, paths: [UInt8], before: Int64, trimmed: Int64, limit: Int) -> PostgresStatement {
        PostgresStatement(
            """
            SELECT newest.position FROM unnest($2::bytea[]) AS ancestors(path), LATERAL (
                SELECT position FROM hearth_feed_locations AS l
                WHERE l.namespace = $1 AND l.path = ancestors.path AND l.position < $3 AND l.position > $4
                ORDER BY l.position DESC LIMIT \(limit)
            ) AS newest
            """, [.text(namespace), .array(.byteaArray, paths), .int8(before), .int8(trimmed)])
    }

    /// The feed rows holding any of `sequences` (commit numbers), in order.
    static func feedRows(namespace: String, sequences: [UInt8]) -> PostgresStatement {
        PostgresStatement(
            "SELECT seq, count::bigint, entries FROM hearth_feed WHERE namespace = $1 AND seq = ANY($2::bigint[]) ORDER BY seq",
            [.text(namespace), .array(.int8Array, sequences)])
    }
}
