extension PostgresSchema {
    /// The catalogue: one row per namespace hearth created (opened for the first time, or imported), so
    /// a namespace exists, empty or not, until it is deleted. Records alone do not say that: a namespace
    /// created from the console has none yet.
    static let createNamespaces = PostgresStatement("""
        CREATE TABLE IF NOT EXISTS hearth_namespaces (
            namespace text PRIMARY KEY,
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """)

    static let selectNamespaces = PostgresStatement("SELECT namespace FROM hearth_namespaces")

    static func namespaceExists(_ namespace: String) -> PostgresStatement {
        PostgresStatement("SELECT EXISTS (SELECT 1 FROM hearth_namespaces WHERE namespace = $1)", [.text(namespace)])
    }

    static func registerNamespace(_ namespace: String) -> PostgresStatement {
        PostgresStatement("INSERT INTO hearth_namespaces (namespace) VALUES ($1) ON CONFLICT DO NOTHING", [.text(namespace)])
    }

    /// Everything stored for a namespace, to run as one transaction: records, change log, rules, entry
    /// (once the commits under way have ended, see ``requireNamespace(_:)``); then a notification on
    /// ``namespacesChannel``, so that other servers close it too.
    static func deleteNamespace(_ namespace: String) -> [PostgresStatement] {
        [PostgresStatement("SELECT pg_advisory_xact_lock(\(creationLockKey), hashtext($1))", [.text("namespace:" + namespace)])]
            + ["hearth_records", "hearth_changes", "hearth_rules", "hearth_namespaces"].map { table in
                PostgresStatement("DELETE FROM \(table) WHERE namespace = $1", [.text(namespace)])
            } + [PostgresStatement("SELECT pg_notify('\(namespacesChannel)', $1)", [.text(namespace)])]
    }

    /// Every commit's first statements: a shared advisory lock on the namespace, which a deletion takes
    /// exclusively (so a commit and a deletion never both succeed: one waits for the other's end), then a
    /// check, in a snapshot taken after the lock, that fails the transaction (SQLSTATE
    /// ``namespaceGoneState``) when the namespace has no catalogue entry: a server that has not heard of
    /// a deletion yet stores nothing into the deleted namespace. An advisory lock lives in memory; a row
    /// lock on the entry would write to its page on every commit, and both nodes' shared locks on one row
    /// make a multixact (measured: cluster.write 0.49× raw instead of 0.53–0.58×).
    static func requireNamespace(_ namespace: String) -> [PostgresStatement] {
        [
            PostgresStatement("SELECT pg_advisory_xact_lock_shared(\(creationLockKey), hashtext($1))", [.text("namespace:" + namespace)]),
            PostgresStatement("SELECT 1 / count(*)::int FROM hearth_namespaces WHERE namespace = $1", [.text(namespace)]),
        ]
    }

    /// How ``requireNamespace(_:)`` fails: division by zero, the count of entries being zero.
    static let namespaceGoneState = "22012"

    /// Notified with a namespace's name when it is deleted (sent on commit).
    static let namespacesChannel = "hearth_namespaces"

    /// Each namespace's bytes of data: per record its path, its string value and string priority (UTF-8),
    /// and 8 bytes for a number, boolean or the row itself. Not what the rows take on disk (tuple headers,
    /// the index, free space), but honest and cheap: one sequential scan with no per-row composite,
    /// half the time of `sum(pg_column_size(r.*))` (docs/storage.md, PostgreSQL, has the numbers).
    static let measureNamespaceBytes = PostgresStatement("""
        SELECT namespace,
            sum(octet_length(path) + coalesce(octet_length(value_string), 0) + coalesce(octet_length(priority_string), 0) + 8)::bigint
        FROM hearth_records GROUP BY namespace
        """)

    /// The catalogue's connection: its scans are background work, so they take one core of the server
    /// rather than every parallel worker it has, and PostgreSQL ends one the catalogue gave up on.
    static let catalogueSession: [PostgresStatement] = [
        PostgresStatement("SET max_parallel_workers_per_gather = 0"),
        PostgresStatement("SET statement_timeout = '120s'"),
    ]
}
