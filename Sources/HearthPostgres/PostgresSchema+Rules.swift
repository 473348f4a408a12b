extension PostgresSchema {
    /// Every namespace's deployed rules, one row a version (1, 2, … per namespace): what was deployed
    /// (`source`, Bolt stays Bolt, in its `format`), when (`deployed_at`, milliseconds since 1970), and
    /// the rules JSON it compiled to (`rules`). The namespace's rules are its newest row's `rules`, so
    /// saving a version and making it apply are one insert, and every server reads the same after a
    /// restart. Text, not bytea: rules are read in psql, and a NUL (which `text` cannot hold) is refused
    /// before it is sent.
    static let createRules = PostgresStatement("""
        CREATE TABLE IF NOT EXISTS hearth_rules (
            namespace text NOT NULL,
            version integer NOT NULL,
            deployed_at bigint NOT NULL,
            format text NOT NULL,
            source text NOT NULL,
            rules text NOT NULL,
            PRIMARY KEY (namespace, version)
        )
        """)

    static func selectRules(namespace: String) -> PostgresStatement {
        PostgresStatement(
            "SELECT version, deployed_at, format, source, rules FROM hearth_rules WHERE namespace = $1 ORDER BY version",
            [.text(namespace)])
    }

    /// Saves a version numbered one past the namespace's newest, and drops the oldest beyond `keeping`.
    /// The transaction first takes a lock of the namespace's own, so two servers deploying at once
    /// number their versions one after the other instead of colliding on the key.
    static func appendRules(
        namespace: String, deployedAt: Int64, format: String, source: String, rules: String, keeping: Int
    ) -> [PostgresStatement] {
        [
            PostgresStatement("SELECT pg_advisory_xact_lock(\(creationLockKey), hashtext($1))", [.text("rules:" + namespace)]),
            PostgresStatement(
                """
                INSERT INTO hearth_rules (namespace, version, deployed_at, format, source, rules)
                SELECT $1, coalesce(max(version), 0) + 1, $2, $3, $4, $5 FROM hearth_rules WHERE namespace = $1
                RETURNING version
                """,
                [.text(namespace), .int8(deployedAt), .text(format), .text(source), .text(rules)]),
            PostgresStatement(
                "DELETE FROM hearth_rules WHERE namespace = $1 AND version <= (SELECT max(version) FROM hearth_rules WHERE namespace = $1) - $2",
                [.text(namespace), .int8(Int64(keeping))]),
            // Delivered when (and only if) the deploy commits: every server reloads the namespace's rules.
            PostgresStatement("SELECT pg_notify('\(rulesChannel)', $1)", [.text(namespace)]),
        ]
    }

    /// The channel a rules deploy notifies, with the namespace as the payload (`PostgresChangeListener`).
    static let rulesChannel = "hearth_rules"

    static func deleteRules(namespace: String) -> PostgresStatement {
        PostgresStatement("DELETE FROM hearth_rules WHERE namespace = $1", [.text(namespace)])
    }
}
