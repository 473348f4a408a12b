import HearthStorage

extension PostgresEndpoint {
    /// A connection of the calling thread's own, within `PostgresTimeouts.connect`.
    ///
    /// - Throws: ``StorageError`` saying what hearth was `doing`, naming the server without its password.
    func connect(doing: String) throws(StorageError) -> PostgresConnection {
        do { return try PostgresConnection(self, deadline: .now + PostgresTimeouts.connect) } catch {
            throw StorageError(error, at: self, doing: doing)
        }
    }

    /// ``connect(doing:)`` with Hearth's tables made or migrated first when needed
    /// (`PostgresSchema.prepareLayout`): for the short jobs done beside the storage threads (the
    /// catalogue, registering and deleting namespaces, rules), which may run before any engine has
    /// connected to this database.
    func connectPrepared(doing: String) throws(StorageError) -> PostgresConnection {
        let connection = try connect(doing: doing)
        do {
            try PostgresSchema.prepareLayout(on: connection, deadline: .at(.now + PostgresTimeouts.commit), endpoint: self)
            return connection
        } catch {
            connection.close()
            throw storageError(error, doing: doing)
        }
    }

    /// Runs `statements` as one transaction on a prepared connection of its own, closed afterwards.
    /// `deadline` bounds the statements once connected (the connect has its own bound).
    func runOnce(
        _ statements: [PostgresStatement], doing: String, deadline: @autoclosure () -> PostgresDeadline = .at(.now + PostgresTimeouts.commit)
    ) throws(StorageError) -> [PostgresResult] {
        let connection = try connectPrepared(doing: doing)
        defer { connection.close() }
        do { return try connection.run(statements, deadline: deadline()) } catch {
            throw StorageError(error, at: self, doing: doing)
        }
    }

    /// Any error of a PostgreSQL exchange as a ``StorageError`` naming this server.
    func storageError(_ error: any Error, doing: String) -> StorageError {
        switch error {
        case let error as StorageError: return error
        case let error as PostgresError: return StorageError(error, at: self, doing: doing)
        default: return StorageError(.io, "PostgreSQL at \(self) failed while \(doing): \(error)")
        }
    }
}
