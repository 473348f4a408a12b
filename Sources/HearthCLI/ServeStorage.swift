import HearthPostgres
import HearthServer
import HearthSQLite
import HearthStorage
import HearthSupport

/// What `hearth serve` hands the server about storage: the namespaces' engines, what it asks about
/// namespaces it has not opened, and where rules are kept. SQLite keeps all three under the data
/// directory; PostgreSQL (`--storage`) keeps every namespace's data, the namespace catalogue and the
/// rules in the database, and the data directory keeps only the admin token, the accounts
/// (auth.sqlite) and the signing key.
struct ServeStorage {
    var files: NamespaceFiles
    var rules: RulesStorage
    var openEngine: @Sendable (String) throws -> any StorageEngine
    /// The banner's `Data:` line, after the label.
    var banner: String
    /// Stops what runs beside the server (the catalogue's refreshes); after the server has closed.
    var close: () -> Void
    /// Where a cluster keeps onDisconnect operations (PostgreSQL only).
    var ledger: (any OnDisconnectLedger)? = nil
    /// Tells of rules deployed by any server on the same storage (PostgreSQL only), by namespace.
    var observeRules: ((@escaping @Sendable (String) -> Void) -> Void)? = nil
    /// Tells of namespaces deleted by any server on the same storage (PostgreSQL only).
    var observeDeletions: ((@escaping @Sendable (String) -> Void) -> Void)? = nil

    /// Opens what `store` needs. For PostgreSQL that is a connection now: a wrong URL, a wrong password
    /// or a stopped server stop `hearth serve` before it listens.
    ///
    /// - Throws: ``StorageError`` naming the server without its password and what to check.
    static func open(
        _ store: DataStore, dataDirectory absolute: String, node: String = "hearth", leaseSeconds: Int = 20,
        feedRetention: ChangeFeedRetention = .standard, log: Log
    ) throws(StorageError) -> ServeStorage {
        switch store {
        case .sqlite(let directory):
            let files = SQLiteNamespaceFiles(directory: directory)
            return ServeStorage(
                files: NamespaceFiles(bytes: files.bytes, names: files.names, delete: files.delete),
                rules: .files(directory: directory, log: log),
                openEngine: { namespace in
                    try SQLiteStorageEngine(directory: directory, namespace: namespace, feedRetention: feedRetention)
                },
                banner: "\(absolute) (one SQLite file per namespace; hearth export/backup read them)",
                close: {})
        case .postgres(let url):
            let catalogue = try PostgresNamespaceCatalogue(url: url, log: log)
            let rules = try PostgresRulesStore(url: url)
            return ServeStorage(
                files: NamespaceFiles(
                    bytes: catalogue.bytes, names: catalogue.names, exists: catalogue.contains, delete: catalogue.delete,
                    opensOverNetwork: true),
                rules: Self.rules(in: rules),
                openEngine: { namespace in
                    // Entered in the catalogue first, so it exists (for every server on the database) even while empty.
                    try catalogue.register(namespace)
                    return try PostgresStorageEngine(url: url, namespace: namespace, feedRetention: feedRetention, log: log)
                },
                banner: "PostgreSQL \(catalogue.endpoint) (every namespace's data and rules; hearth export/backup --storage read them)\n"
                    + "              \(absolute) keeps the admin token (give every node the same one)",
                close: {
                    catalogue.close()
                    PostgresBackgroundThreads.stop()
                },
                ledger: PostgresOnDisconnectLedger(
                    try PostgresDisconnectLeases(url: url, node: node, lease: .seconds(leaseSeconds), log: log)),
                observeRules: { changed in rules.observe(log: log, changed) },
                observeDeletions: { deleted in catalogue.observeDeletions(deleted) })
        }
    }

    /// The server's rules storage over `hearth_rules`.
    static func rules(in store: PostgresRulesStore) -> RulesStorage {
        RulesStorage(
            load: { namespace in
                var stored = StoredRules()
                for row in try store.versions(of: namespace) {
                    guard let format = RulesVersion.Format(rawValue: row.format) else {
                        throw StorageError(.corrupt, "version \(row.number) of the rules of '\(namespace)' in hearth_rules at \(store.endpoint) has the format '\(row.format.prefix(20))', not json or bolt. Check hearth_rules.")
                    }
                    stored.versions.append(RulesVersion(version: row.number, deployedAt: row.deployedAt, format: format, source: row.source))
                    stored.rules = row.rules
                }
                return stored
            },
            save: { namespace, rules, deployment in
                try store.append(
                    to: namespace, rules: rules, format: deployment.format.rawValue, source: deployment.source,
                    deployedAt: deployment.deployedAt, keeping: RulesStorage.versionsMax)
            },
            delete: { namespace in try store.delete(namespace) })
    }
}
