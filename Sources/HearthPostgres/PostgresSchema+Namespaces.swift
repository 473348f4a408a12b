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

    /// Everything stored for a namespace, to run as one transaction: records, change log, feed and its
    /// location index, applied write IDs, rules, entry;
    /// then a notification on ``namespacesChannel``, so that other servers close it too.
    static func deleteNamespace(_ namespace: String) -> [PostgresStatement] {
        [
            "hearth_records", "hearth_changes", "hearth_feed", "hearth_feed_trimmed", "hearth_feed_locations", "hearth_feed_locations_through",
            "hearth_applied_writes", "hearth_rules", "hearth_namespaces",
        ].map { table in
            PostgresStatement("DELETE FROM \(table) WHERE namespace = $1", [.text(namespace)])
        } + [PostgresStatement("SELECT pg_notify('\(namespacesChannel)', $1)", [.text(namespace)])]
    }

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
