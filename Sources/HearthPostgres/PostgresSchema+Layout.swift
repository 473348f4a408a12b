import HearthStorage

extension PostgresSchema {
    /// What turns an older layout into the next one, by the version it starts from. Each runs as one
    /// transaction under the creation lock and can run twice (two servers upgrading at once): the tables
    /// are created only when missing, and the version only ever moves up.
    static let migrations: [Int32: [PostgresStatement]] = [
        // 1 → 2: the namespace catalogue and the deployed rules. Namespaces that already hold records
        // are entered in the catalogue, so they are listed as before.
        1: [
            PostgresStatement("SELECT pg_advisory_xact_lock(\(creationLockKey))"),
            createNamespaces,
            createRules,
            PostgresStatement("INSERT INTO hearth_namespaces (namespace) SELECT DISTINCT namespace FROM hearth_records ON CONFLICT DO NOTHING"),
            PostgresStatement("UPDATE hearth_schema SET version = 2 WHERE version < 2"),
        ],
        // 2 → 3: the change feed, empty (docs/feed.md).
        2: [PostgresStatement("SELECT pg_advisory_xact_lock(\(creationLockKey))")] + createFeed + [
            PostgresStatement("UPDATE hearth_schema SET version = 3 WHERE version < 3"),
        ],
        // 3 → 4: the write IDs commits applied, empty (`createAppliedWrites`), and the feed's running
        // totals of bytes (`addFeedRunningTotals`).
        3: [
            PostgresStatement("SELECT pg_advisory_xact_lock(\(creationLockKey))"),
            createAppliedWrites,
        ] + addFeedRunningTotals + [
            PostgresStatement("UPDATE hearth_schema SET version = 4 WHERE version < 4"),
        ],
        // 4 → 5: the feed's location index, empty: it is built when a history first asks for it.
        4: [PostgresStatement("SELECT pg_advisory_xact_lock(\(creationLockKey))")] + createFeedLocations + [
            PostgresStatement("UPDATE hearth_schema SET version = 5 WHERE version < 5"),
        ],
    ]

    static let storedVersion = PostgresStatement("SELECT max(version) FROM hearth_schema")

    /// Makes Hearth's tables ready on `connection`: created when there are none, migrated when they are
    /// of an older layout, refused when a newer Hearth made them. Every connection that uses the tables
    /// calls this first (the storage thread's, the catalogue's, the short ones for rules and namespaces).
    ///
    /// - Throws: `PostgresError` when PostgreSQL fails; ``StorageError`` (`.corrupt`) for a layout this
    ///   build cannot use, or (`.readOnly`) for an upgrade the URL's user may not make.
    static func prepareLayout(on connection: PostgresConnection, deadline: PostgresDeadline, endpoint: PostgresEndpoint) throws {
        let exists = try connection.run([Self.exists], deadline: deadline)
        guard exists.first?.firstValue?.bytes(0).flatMap(PostgresBinary.decodeBoolean) == true else {
            _ = try connection.run(create, deadline: deadline)
            return
        }
        let read = try connection.run([storedVersion], deadline: deadline)
        guard var found = read.first?.firstValue?.bytes(0).flatMap(PostgresBinary.decodeInt32) else {
            throw StorageError(.corrupt, "Hearth's tables at \(endpoint) have no layout version (hearth_schema is empty or altered). Check hearth_schema.")
        }
        if found > version {
            throw StorageError(.corrupt, "Hearth's tables at \(endpoint) were made by a newer Hearth (layout \(found); this build reads up to \(version)). Upgrade hearth.")
        }
        while found < version {
            guard let steps = migrations[found] else {
                throw StorageError(.corrupt, "Hearth's tables at \(endpoint) have layout \(found), which this build cannot upgrade. Check hearth_schema.")
            }
            do throws(PostgresError) {
                _ = try connection.run(steps, deadline: deadline)
            } catch {
                guard error.kind == .server(sqlState: "42501") else { throw error }
                throw StorageError(.readOnly, "Hearth's tables at \(endpoint) have layout \(found) and this hearth needs \(version), but the URL's user may not change them (\(error.message)). Run hearth once as the tables' owner, which adds the tables of layout \(version) (docs/storage.md, PostgreSQL).")
            }
            found += 1
        }
    }
}
