public import HearthStorage

/// The namespaces of a PostgreSQL database, asked and changed directly: every call opens a connection of
/// the calling thread's own and waits for PostgreSQL (bounded by `PostgresTimeouts`), so it is for
/// threads that may wait: the data commands, a namespace's opening, a deletion. The server's event loop
/// asks ``PostgresNamespaceCatalogue`` instead, which answers from memory.
///
///     let namespaces = try PostgresNamespaces(url: "postgresql://hearth:secret@db/hearth")
///     try namespaces.register("shop")       // exists from now on, empty
///     try namespaces.contains("shop")       // true
///     try namespaces.delete("shop")         // records, change log, rules and entry, in one transaction
public struct PostgresNamespaces: Sendable {
    /// The database, named without its password.
    public let endpoint: PostgresEndpoint

    /// - Throws: ``StorageError`` (`.invalidData`) when `url` is not a PostgreSQL URL; nothing connects yet.
    public init(url: String) throws(StorageError) {
        endpoint = try PostgresEndpoint(url: url)
    }

    init(endpoint: PostgresEndpoint) { self.endpoint = endpoint }

    /// Whether hearth created `namespace` here (and it was not deleted since).
    public func contains(_ namespace: String) throws(StorageError) -> Bool {
        let results = try endpoint.runOnce([PostgresSchema.namespaceExists(namespace)], doing: "looking up namespace '\(namespace)'")
        return results.first?.firstValue?.bytes(0).flatMap(PostgresBinary.decodeBoolean) == true
    }

    /// Enters `namespace` in the catalogue (`hearth_namespaces`); nothing happens when it is there.
    public func register(_ namespace: String) throws(StorageError) {
        guard NamespaceName.isValid(namespace) else { throw StorageError(.invalidData, NamespaceName.invalidMessage(namespace)) }
        _ = try endpoint.runOnce([PostgresSchema.registerNamespace(namespace)], doing: "creating namespace '\(namespace)'")
    }

    /// Removes everything stored for `namespace` in one transaction: its records, its change log, its
    /// rules and its entry. An engine still open on it (another server's, until it hears) fails its
    /// commits from then on (`PostgresSchema.appendChange`); one opened later creates it again.
    public func delete(_ namespace: String) throws(StorageError) {
        _ = try endpoint.runOnce(
            PostgresSchema.deleteNamespace(namespace), doing: "deleting namespace '\(namespace)'",
            deadline: .afterSilence(PostgresTimeouts.silence))
    }
}
