/// The tables every namespace shares in one PostgreSQL database (docs/storage.md, PostgreSQL), and the
/// statements that read and write them. Each namespace is a `namespace` value, not a table: a new
/// namespace needs no DDL, and one primary-key index serves them all.
///
///     hearth_records(namespace, path, value_boolean, value_integer, value_double, value_string,
///                    priority_number, priority_string)   one row per leaf and per prioritized inner node
///     hearth_changes(namespace, seq, batch)             one row per commit, for other nodes to follow
///     hearth_namespaces(namespace, created_at)           one row per namespace hearth created (the catalogue)
///     hearth_rules(namespace, version, deployed_at, format, source, rules)   deployed rules, one row a version
///     hearth_schema(version)                             the layout version
///
/// - `path` is the record's ``EncodedPath`` (HearthStorage) as `bytea`, like SQLite's `nodes.path`:
///   `bytea` compares bytewise whatever the database's collation, so a subtree is the key range
///   `[path, path with its last byte + 1)` and `ORDER BY path` is the order the tree builder needs.
/// - Strings (values and priorities) are `bytea` holding UTF-8: PostgreSQL's `text` cannot hold
///   U+0000, which a JSON string can, and `bytea` is never converted between encodings.
///   `hearth_records_readable` shows them as text.
/// - `hearth_changes.seq` counts a namespace's commits from 1 without gaps; its primary key
///   `(namespace, seq)` is also the fence that keeps two commits built on the same state (a second
///   writer, or a commit this engine gave up on that arrives late) from both landing.
/// - `batch` is the commit's batches in order, encoded by `WriteBatch.encode` (HearthStorage).
enum PostgresSchema {
    /// Layout version in `hearth_schema`; bumped with a migration when the layout changes
    /// (``migrations``): 1 had records and changes, 2 adds `hearth_namespaces` and `hearth_rules`, 3 the
    /// change feed (`hearth_feed`, `hearth_feed_trimmed`), 4 the write IDs commits applied
    /// (`hearth_applied_writes`), 5 the feed's location index (`hearth_feed_locations`).
    static let version: Int32 = 5

    /// Key of the advisory lock held while the tables are created, so two engines starting at once in
    /// one database do not race on `CREATE TABLE IF NOT EXISTS` (which can then fail on pg_type's
    /// unique index). 'Hrth' as a number.
    static let creationLockKey: Int64 = 0x4872_7468

    /// Whether the layout exists in the current schema (`search_path`). Checked before creating it, so
    /// a user without CREATE rights can use tables an administrator made.
    static let exists = PostgresStatement("SELECT to_regclass('hearth_schema') IS NOT NULL")

    static let create: [PostgresStatement] = [
        PostgresStatement("SELECT pg_advisory_xact_lock(\(creationLockKey))"),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_records (
                namespace text NOT NULL,
                path bytea NOT NULL,
                value_boolean boolean,
                value_integer bigint,
                value_double double precision,
                value_string bytea,
                priority_number double precision,
                priority_string bytea,
                PRIMARY KEY (namespace, path),
                CHECK (num_nonnulls(value_boolean, value_integer, value_double, value_string) <= 1),
                CHECK (num_nonnulls(priority_number, priority_string) <= 1)
            )
            """),
        PostgresStatement("""
            CREATE TABLE IF NOT EXISTS hearth_changes (
                namespace text NOT NULL,
                seq bigint NOT NULL,
                batch bytea NOT NULL,
                PRIMARY KEY (namespace, seq)
            )
            """),
        // What psql users read: /users/ada/name | Ada | (null). A string holding U+0000 is shown escaped.
        PostgresStatement("""
            CREATE OR REPLACE VIEW hearth_records_readable AS
                SELECT namespace,
                    '/' || rtrim(replace(convert_from(path, 'UTF8'), chr(1), '/'), '/') AS path,
                    coalesce(value_boolean::text, value_integer::text, value_double::text,
                        CASE WHEN position('\\x00'::bytea IN value_string) = 0 THEN convert_from(value_string, 'UTF8')
                        ELSE encode(value_string, 'escape') END) AS value,
                    coalesce(priority_number::text,
                        CASE WHEN position('\\x00'::bytea IN priority_string) = 0 THEN convert_from(priority_string, 'UTF8')
                        ELSE encode(priority_string, 'escape') END) AS priority
                FROM hearth_records
            """),
        createNamespaces,
        createRules,
        createAppliedWrites,
    ] + createFeed + createFeedLocations + [
        PostgresStatement("CREATE TABLE IF NOT EXISTS hearth_schema (version integer NOT NULL)"),
        PostgresStatement("INSERT INTO hearth_schema (version) SELECT \(version) WHERE NOT EXISTS (SELECT 1 FROM hearth_schema)"),
    ]

    /// What the storage thread reads on every connect: the layout's version and the namespace's last
    /// commit. And, when the server or role has `synchronous_commit = off`, turns it on for this session:
    /// with it off PostgreSQL acknowledges commits before they are on disk, and Hearth acknowledges
    /// writes only once they are durable.
    static func session(namespace: String) -> [PostgresStatement] {
        [
            PostgresStatement("SELECT max(version) FROM hearth_schema"),
            PostgresStatement("SELECT coalesce(max(seq), 0) FROM hearth_changes WHERE namespace = $1", [.text(namespace)]),
            PostgresStatement("SELECT set_config('synchronous_commit', 'on', false) WHERE current_setting('synchronous_commit') = 'off'"),
        ]
    }

    static func lastSequence(namespace: String) -> PostgresStatement {
        PostgresStatement("SELECT coalesce(max(seq), 0) FROM hearth_changes WHERE namespace = $1", [.text(namespace)])
    }

    /// Every record of the namespace in path order, for the tree builder (binary columns, see `load`).
    static func selectRecords(namespace: String) -> PostgresStatement {
        PostgresStatement(
            """
            SELECT path, value_boolean, value_integer, value_double, value_string, priority_number, priority_string
            FROM hearth_records WHERE namespace = $1 ORDER BY path
            """, [.text(namespace)])
    }

    /// The change-log row of a commit. It fails the transaction (SQLSTATE ``namespaceGoneState``) when
    /// the namespace has no catalogue entry: a server that has not heard of a deletion yet stores nothing
    /// into the deleted namespace. The check is part of the insert, one index lookup: as a statement of
    /// its own with a lock it cost cluster.write a tenth (0.49× raw instead of 0.53–0.58×). Without a lock,
    /// a commit whose transaction overlaps the deletion's (a millisecond) can still land.
    static func appendChange(namespace: String, sequence: Int64, batch: [UInt8]) -> PostgresStatement {
        PostgresStatement(
            """
            INSERT INTO hearth_changes (namespace, seq, batch)
            VALUES ($1, $2 + 0 * (1 / (SELECT count(*)::int FROM hearth_namespaces WHERE namespace = $1)), $3)
            """,
            [.text(namespace), .int8(sequence), .bytea(batch)])
    }

    /// How ``appendChange(namespace:sequence:batch:)`` fails for a deleted namespace: division by zero,
    /// the count of its catalogue entries being zero.
    static let namespaceGoneState = "22012"

    /// A change-log row that says "too large to log: load a snapshot" (a streamed import, whose tree
    /// may not fit in memory, let alone in one row). Followers that reach it reload the namespace.
    static let reloadMarker: [UInt8] = [0]

    /// The channel every commit notifies, with `"<sequence> <namespace>"` as the payload: followers
    /// (`PostgresChangeListener`) wake on it, then read the log itself, which is the truth.
    static let changesChannel = "hearth_changes"

    /// Sent in each commit's transaction: PostgreSQL delivers it when (and only if) the commit does.
    static func notifyChange(namespace: String, sequence: Int64) -> PostgresStatement {
        PostgresStatement("SELECT pg_notify('\(changesChannel)', $1)", [.text("\(sequence) \(namespace)")])
    }

    /// The change-log rows after `sequence`, oldest first, at most `limit` of them.
    static func changes(namespace: String, after sequence: Int64, limit: Int) -> PostgresStatement {
        PostgresStatement(
            "SELECT seq, batch FROM hearth_changes WHERE namespace = $1 AND seq > $2 ORDER BY seq LIMIT \(limit)",
            [.text(namespace), .int8(sequence)])
    }

    /// Drops change-log rows up to `sequence` (see `PostgresWriter.changeLogRetention`).
    static func pruneChanges(namespace: String, through sequence: Int64) -> PostgresStatement {
        PostgresStatement("DELETE FROM hearth_changes WHERE namespace = $1 AND seq <= $2", [.text(namespace), .int8(sequence)])
    }

    static func deleteAllRecords(namespace: String) -> PostgresStatement {
        PostgresStatement("DELETE FROM hearth_records WHERE namespace = $1", [.text(namespace)])
    }

    static func deleteRecords(namespace: String, paths: [UInt8]) -> PostgresStatement {
        PostgresStatement(
            "DELETE FROM hearth_records WHERE namespace = $1 AND path = ANY($2)", [.text(namespace), .array(.byteaArray, paths)])
    }

    /// One statement for every removed subtree: a nested loop of index range scans, one per range.
    static func deleteRanges(namespace: String, lows: [UInt8], highs: [UInt8]) -> PostgresStatement {
        PostgresStatement(
            """
            DELETE FROM hearth_records AS r USING unnest($2::bytea[], $3::bytea[]) AS d(low, high)
            WHERE r.namespace = $1 AND r.path >= d.low AND r.path < d.high
            """, [.text(namespace), .array(.byteaArray, lows), .array(.byteaArray, highs)])
    }

    /// Inserts or replaces records given as one array per column (the same length, NULLs where a
    /// record has no such value).
    static func upsertRecords(namespace: String, columns: consuming RecordColumns) -> PostgresStatement {
        PostgresStatement(
            """
            INSERT INTO hearth_records AS r
                (namespace, path, value_boolean, value_integer, value_double, value_string, priority_number, priority_string)
            SELECT $1, * FROM unnest($2::bytea[], $3::boolean[], $4::bigint[], $5::float8[], $6::bytea[], $7::float8[], $8::bytea[])
            ON CONFLICT (namespace, path) DO UPDATE SET
                value_boolean = excluded.value_boolean, value_integer = excluded.value_integer,
                value_double = excluded.value_double, value_string = excluded.value_string,
                priority_number = excluded.priority_number, priority_string = excluded.priority_string
            """,
            [.text(namespace)] + columns.parameters())
    }

    static func vacuum() -> [PostgresStatement] {
        [PostgresStatement("VACUUM (ANALYZE) hearth_records"), PostgresStatement("VACUUM (ANALYZE) hearth_changes")]
    }
}
