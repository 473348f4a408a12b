public import HearthStorage
public import HearthSupport

/// Every namespace's deployed rules and their versions in `hearth_rules` (`PostgresSchema+Rules`), so
/// that every server on the database reads the same rules after a restart. Each call opens a connection
/// of the calling thread's own and waits for PostgreSQL (bounded by `PostgresTimeouts`): the server calls
/// it off its event loop.
///
///     let store = try PostgresRulesStore(url: "postgresql://hearth:secret@db/hearth")
///     let number = try store.append(to: "shop", rules: json, format: "json", source: json, deployedAt: now, keeping: 50)
///     try store.versions(of: "shop").last?.rules   // json
public struct PostgresRulesStore: Sendable {
    /// One deployed version: its number, when (milliseconds since 1970), what was deployed (`format`
    /// `json` or `bolt`, and its `source`) and the rules JSON it compiled to.
    public struct Version: Sendable, Equatable {
        public var number: Int
        public var deployedAt: Int64
        public var format: String
        public var source: String
        public var rules: String
    }

    public let endpoint: PostgresEndpoint

    /// - Throws: ``StorageError`` (`.invalidData`) when `url` is not a PostgreSQL URL; nothing connects yet.
    public init(url: String) throws(StorageError) {
        endpoint = try PostgresEndpoint(url: url)
    }

    /// The namespace's versions, oldest first; the last one's `rules` apply. Empty when none were deployed.
    public func versions(of namespace: String) throws(StorageError) -> [Version] {
        let doing = "reading the rules of namespace '\(namespace)'"
        let results = try endpoint.runOnce([PostgresSchema.selectRules(namespace: namespace)], doing: doing)
        guard let result = results.first else { return [] }
        var versions: [Version] = []
        for index in 0..<Int32(clamping: result.rowCount) {
            let row = PostgresRow(result: result, index: index)
            guard let number = row.bytes(0).flatMap(PostgresBinary.decodeInt32),
                let deployedAt = row.bytes(1).flatMap(PostgresBinary.decodeInt64),
                let format = row.bytes(2).flatMap(PostgresBinary.decodeString),
                let source = row.bytes(3).flatMap(PostgresBinary.decodeString),
                let rules = row.bytes(4).flatMap(PostgresBinary.decodeString)
            else {
                throw StorageError(.corrupt, "a row of hearth_rules at \(endpoint) for namespace '\(namespace)' does not decode. Check the table (SELECT * FROM hearth_rules WHERE namespace = '\(namespace)').")
            }
            versions.append(Version(number: Int(number), deployedAt: deployedAt, format: format, source: source, rules: rules))
        }
        return versions
    }

    /// Saves a new version (numbered one past the newest) whose `rules` apply from now on, and keeps the
    /// newest `keeping` versions; one transaction. Returns the new version's number.
    public func append(
        to namespace: String, rules: String, format: String, source: String, deployedAt: Int64, keeping: Int
    ) throws(StorageError) -> Int {
        // PostgreSQL's text cannot hold U+0000; refused here with a reason rather than by the server.
        guard !rules.utf8.contains(0), !source.utf8.contains(0) else {
            throw StorageError(.invalidData, "rules holding a NUL character (U+0000) cannot be stored in PostgreSQL: remove it and deploy again.")
        }
        let statements = PostgresSchema.appendRules(
            namespace: namespace, deployedAt: deployedAt, format: format, source: source, rules: rules, keeping: keeping)
        let results = try endpoint.runOnce(statements, doing: "storing the rules of namespace '\(namespace)'")
        // Results of the statements that return rows or a command status, in order: the lock, the insert,
        // the trim, the notification.
        guard results.count == 4, let number = results[1].firstValue?.bytes(0).flatMap(PostgresBinary.decodeInt32) else {
            throw StorageError(.io, "PostgreSQL at \(endpoint) stored the rules of namespace '\(namespace)' but did not say their version. Check hearth_rules.")
        }
        return Int(number)
    }

    /// Calls `changed` (on a thread of the listener's) with the namespace whenever any server deploys
    /// rules to this database, this one included, so that each server applies them.
    public func observe(log: Log, _ changed: @escaping @Sendable (_ namespace: String) -> Void) {
        PostgresChangeListener.shared(for: endpoint, log: log).observeRules(changed)
    }

    /// Removes every version of the namespace's rules.
    public func delete(_ namespace: String) throws(StorageError) {
        _ = try endpoint.runOnce([PostgresSchema.deleteRules(namespace: namespace)], doing: "deleting the rules of namespace '\(namespace)'")
    }
}
