public import HearthAuth
public import HearthPostgres
public import HearthSupport

/// ``AccountStore`` in PostgreSQL tables prefixed `hearth_auth_` (``PostgresAuthSchema``), so that every
/// node of a cluster sees the same accounts, sessions and codes (docs/auth.md, "With PostgreSQL").
///
///     let database = try PostgresDatabase(url: "postgresql://hearth:secret@db:5432/hearth")
///     let store = try PostgresAccountStore(database: database)
///
/// Each call is one round trip on a connection of the database's pool (a few for `modify`), safe from
/// any number of threads. Conflicts are refused by the tables' unique constraints, so two nodes signing
/// up one address at once end with one account and an ``AccountStoreConflict`` for the other. `modify`
/// locks the account's row (`SELECT … FOR UPDATE`) from its read to its write, on whichever node.
/// Accounts read by id are cached and dropped when any node changes them (``UserCache``).
///
/// Errors: ``AccountStoreConflict`` for a taken id, email, phone number or identity; otherwise the
/// pool's `StorageError`, which names the server (without its password) and says what to check. While
/// PostgreSQL is down every call fails within `PostgresTimeouts.query`, at once when it refuses
/// connections; the first call after it is back reconnects.
public final class PostgresAccountStore: AccountStore {
    public let database: PostgresDatabase
    let cache = UserCache()
    /// Auth events this node recorded: retention runs every so many (PostgresAccountStore+Events.swift).
    private let eventsRecorded = Locked<Int64>(0)
    private let listener: PostgresListener

    /// A store over `database`'s auth tables, created when missing.
    ///
    /// - Throws: `StorageError` when PostgreSQL cannot be reached or the tables are a newer Hearth's.
    public init(database: PostgresDatabase) throws {
        self.database = database
        try PostgresAuthSchema.prepare(database)
        try Self.prepareEvents(database)
        listener = database.listen(to: PostgresAuthSchema.userChangesChannel) { [cache] event in cache.handle(event) }
    }

    /// A store with a pool of its own over the database at `url`.
    public convenience init(url: String, log: Log = .silent) throws {
        try self.init(database: PostgresDatabase(url: url, log: log))
    }

    deinit { listener.stop() }

    /// Stops listening for changes and closes the pool's connections.
    public func close() {
        listener.stop()
        database.close()
    }

    // MARK: Users

    /// Reads may wait for PostgreSQL: the service answers its loop from memory (`AccountVerdicts`).
    public var readsOverNetwork: Bool { true }

    public func user(id: String) throws -> UserRecord? {
        let (cached, read) = cache.lookup(id)
        if let cached { return cached }
        var user: UserRecord?
        defer { if let read { cache.finish(read, with: user) } }
        user = try firstUser(database.query("SELECT record FROM hearth_auth_users WHERE uid = $1", [.text(id)], doing: "reading an account"))
        return user
    }

    public func user(email: String) throws -> UserRecord? {
        try firstUser(database.query("SELECT record FROM hearth_auth_users WHERE email = $1", [.text(email)], doing: "reading an account"))
    }

    public func user(phoneNumber: String) throws -> UserRecord? {
        try firstUser(database.query("SELECT record FROM hearth_auth_users WHERE phone = $1", [.text(phoneNumber)], doing: "reading an account"))
    }

    public func user(providerId: String, rawId: String) throws -> UserRecord? {
        try firstUser(database.query(
            """
            SELECT u.record FROM hearth_auth_user_providers p JOIN hearth_auth_users u ON u.uid = p.uid
            WHERE p.provider_id = $1 AND p.raw_id = $2
            """,
            [.text(providerId), .text(rawId)], doing: "reading an account"))
    }

    public func insert(_ user: UserRecord) throws {
        let record = try user.storedJSON()
        try conflictChecked {
            _ = try database.run(
                [PostgresStatement(
                    "INSERT INTO hearth_auth_users (uid, email, phone, record) VALUES ($1, $2, $3, $4)",
                    [.text(user.localId), .text(user.email), .text(user.phoneNumber), .text(record)])]
                    + Self.insertProviders(of: user) + Self.record(.created, user),
                doing: "creating an account")
        }
        eventRecorded()
    }

    private func eventRecorded() {
        trimEventsNow(andThen: eventsRecorded.withLock { count in
            count += 1
            return count
        })
    }

    public func update(_ user: UserRecord) throws {
        let statements = try Self.store(user)
        defer { cache.drop(user.localId) }
        try conflictChecked { _ = try database.run(statements, doing: "changing an account") }
    }

    @discardableResult
    public func modify(id: String, _ body: (inout UserRecord) throws -> Void) throws -> UserRecord? {
        defer { cache.drop(id) }
        let (user, recorded) = try conflictChecked {
            try database.transaction(doing: "changing an account") { transaction -> (UserRecord?, Bool) in
                let rows = try transaction.run([PostgresStatement(
                    "SELECT record FROM hearth_auth_users WHERE uid = $1 FOR UPDATE", [.text(id)])])[0]
                guard var user = try firstUser(rows) else { return (nil, false) }
                let wasDisabled = user.disabled
                try body(&user)
                user.localId = id
                let event = user.disabled == wasDisabled ? [] : Self.record(user.disabled ? .disabled : .enabled, user)
                _ = try transaction.run(try Self.store(user) + event)
                return (user, !event.isEmpty)
            }
        }
        if recorded { eventRecorded() }
        return user
    }

    @discardableResult
    public func delete(id: String) throws -> Bool {
        defer { cache.drop(id) }
        let existed = try database.transaction(doing: "deleting an account") { transaction -> Bool in
            let rows = try transaction.run([PostgresStatement("SELECT record FROM hearth_auth_users WHERE uid = $1 FOR UPDATE", [.text(id)])])[0]
            guard let gone = try firstUser(rows) else { return false }
            _ = try transaction.run(
                Self.record(.deleted, gone) + [
                    PostgresStatement("DELETE FROM hearth_auth_users WHERE uid = $1", [.text(id)]),
                    PostgresStatement("DELETE FROM hearth_auth_user_providers WHERE uid = $1", [.text(id)]),
                    // Revoked, not dropped: until pruned, a refresh with one answers USER_NOT_FOUND (see
                    // SQLiteAccountStore.delete for why that matters to FirebaseAuth's iOS SDK).
                    PostgresStatement("UPDATE hearth_auth_refresh_tokens SET revoked = true WHERE uid = $1", [.text(id)]),
                    PostgresStatement("DELETE FROM hearth_auth_oob_codes WHERE uid = $1", [.text(id)]),
                ])
            return true
        }
        if existed { eventRecorded() }
        return existed
    }

    public func users(after: String?, limit: Int) throws -> [UserRecord] {
        try users(database.query(
            "SELECT record FROM hearth_auth_users WHERE uid > $1 ORDER BY uid LIMIT $2",
            [.text(after ?? ""), .int8(Int64(max(0, limit)))], doing: "listing accounts"))
    }

    public func users(offset: Int, limit: Int, descending: Bool) throws -> [UserRecord] {
        try users(database.query(
            "SELECT record FROM hearth_auth_users ORDER BY uid \(descending ? "DESC" : "ASC") LIMIT $1 OFFSET $2",
            [.int8(Int64(max(0, limit))), .int8(Int64(max(0, offset)))], doing: "listing accounts"))
    }

    public func userCount() throws -> Int {
        let count = try database.query("SELECT count(*) FROM hearth_auth_users", doing: "counting accounts").first?.int64(at: 0)
        return Int(clamping: count ?? 0)
    }

    public func deleteAllUsers() throws {
        defer { cache.dropAll() }
        _ = try database.run(
            ["hearth_auth_users", "hearth_auth_user_providers", "hearth_auth_refresh_tokens", "hearth_auth_oob_codes"]
                .map { PostgresStatement("DELETE FROM \($0)") },
            doing: "deleting every account")
    }

    // MARK: Statements

    /// Writes the record into its row (made already) and its linked identities into theirs.
    private static func store(_ user: UserRecord) throws -> [PostgresStatement] {
        [
            PostgresStatement(
                "UPDATE hearth_auth_users SET email = $2, phone = $3, record = $4 WHERE uid = $1",
                [.text(user.localId), .text(user.email), .text(user.phoneNumber), .text(try user.storedJSON())]),
            PostgresStatement("DELETE FROM hearth_auth_user_providers WHERE uid = $1", [.text(user.localId)]),
        ] + insertProviders(of: user)
    }

    private static func insertProviders(of user: UserRecord) -> [PostgresStatement] {
        (user.linkedProviders ?? []).map { provider in
            PostgresStatement(
                "INSERT INTO hearth_auth_user_providers (provider_id, raw_id, uid) VALUES ($1, $2, $3)",
                [.text(provider.providerId), .text(provider.rawId), .text(user.localId)])
        }
    }

    // MARK: Decoding

    private func firstUser(_ rows: PostgresRows) throws -> UserRecord? {
        guard let row = rows.first else { return nil }
        return try UserRecord(storedJSON: row.string(at: 0) ?? "")
    }

    private func users(_ rows: PostgresRows) throws -> [UserRecord] {
        try rows.map { try UserRecord(storedJSON: $0.string(at: 0) ?? "") }
    }

    /// Runs `body`, turning a broken unique constraint into the conflict it means.
    private func conflictChecked<Value>(_ body: () throws -> Value) throws -> Value {
        do { return try body() } catch let violation as PostgresUniqueViolation {
            switch violation.constraint {
            case PostgresAuthSchema.Constraint.userID: throw AccountStoreConflict(.id)
            case PostgresAuthSchema.Constraint.phoneNumber: throw AccountStoreConflict(.phoneNumber)
            case PostgresAuthSchema.Constraint.provider: throw AccountStoreConflict(.provider)
            case PostgresAuthSchema.Constraint.email: throw AccountStoreConflict(.email)
            default: throw violation  // another table's key: not an account conflict
            }
        }
    }
}
