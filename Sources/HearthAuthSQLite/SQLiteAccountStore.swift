import Foundation
public import HearthAuth
public import HearthSQL
import HearthCrypto
import Synchronization

/// ``AccountStore`` in SQLite tables prefixed `auth_`.
///
/// By default the tables live in `<data>/auth.sqlite`, not in a namespace's database file: accounts
/// belong to the project while the database files belong to namespaces, and the namespace files are
/// owned by their engine's storage thread, whose long write transactions would stall sign-ins. The
/// tables carry the `auth_` prefix so that they can move into the project's main file without renames.
///
/// The file runs in WAL mode with `synchronous=NORMAL`: a commit survives a process crash, and only a
/// power loss can drop the last few transactions (a rotated refresh token, a login time). Full sync cost
/// one fsync per token refresh, which capped refreshes far below the 3,000/s target; for the same reason
/// checkpoints run on a background thread (``SQLiteDatabase/checkpointInBackground(every:)``).
public final class SQLiteAccountStore: AccountStore, @unchecked Sendable {  // SQLiteDatabase serialises access
    private let database: SQLiteDatabase
    /// Decoded users by uid: every token refresh and ID-token check reads its user, and decoding the JSON
    /// record cost more than the query. All writes go through this store, which keeps it current: reads
    /// that fill it and writes to users hold its lock across the SQL, so a stale record cannot slip in.
    /// Cleared when SQLite's `data_version` moves, i.e. another process (`hearth users`) changed the file.
    /// The version is read at most every `externalChangeCheckNanoseconds` (one less locked round trip per
    /// token refresh), so another process's change is seen within that time.
    private let cache = Mutex<(entries: [String: UserRecord], version: Int64, checked: UInt64)>(([:], -1, 0))
    private let externalChangeCheckNanoseconds: UInt64
    /// Monotonic nanoseconds: when the last check was (tests pass a clock that moves when told).
    private let uptimeNanoseconds: @Sendable () -> UInt64
    private static let cacheCapacity = 10_000

    /// - Parameter externalChangeCheck: seconds between checks for changes made by other processes.
    /// - Parameter uptimeNanoseconds: the monotonic clock those checks are timed on (the system's unless
    ///   given).
    /// The file (and its `-wal`/`-shm`, which SQLite creates with the database file's mode) is private to
    /// the owner: it holds password hashes, sessions and pending codes.
    public convenience init(
        path: String, externalChangeCheck: Double = 0.025,
        uptimeNanoseconds: (@Sendable () -> UInt64)? = nil
    ) throws {
        let inMemory = path.isEmpty || path == ":memory:" || path.hasPrefix("file:")
        if !inMemory {
            let error = OwnerOnlyFiles.createFile(path)
            if error != 0 { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: error) ?? .EIO)]) }
        }
        try self.init(database: SQLiteDatabase(path: path), externalChangeCheck: externalChangeCheck, uptimeNanoseconds: uptimeNanoseconds)
        if !inMemory { OwnerOnlyFiles.tighten(OwnerOnlyFiles.databaseFiles(path)) }  // older installs: 0644
    }

    public init(
        database: SQLiteDatabase, externalChangeCheck: Double = 0.025,
        uptimeNanoseconds: (@Sendable () -> UInt64)? = nil
    ) throws {
        self.database = database
        self.uptimeNanoseconds = uptimeNanoseconds ?? { DispatchTime.now().uptimeNanoseconds }
        externalChangeCheckNanoseconds = UInt64(max(0, externalChangeCheck) * 1e9)
        try database.executeScript("""
            PRAGMA synchronous=NORMAL;
            CREATE TABLE IF NOT EXISTS auth_users (
                uid TEXT PRIMARY KEY NOT NULL,
                email TEXT UNIQUE,
                record TEXT NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS auth_refresh_tokens (
                hash BLOB PRIMARY KEY NOT NULL,
                uid TEXT NOT NULL,
                provider TEXT NOT NULL,
                auth_time INTEGER NOT NULL,
                extra_claims TEXT,
                issued_at INTEGER NOT NULL,
                revoked INTEGER NOT NULL DEFAULT 0
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS auth_refresh_tokens_uid ON auth_refresh_tokens(uid);
            DROP TABLE IF EXISTS auth_oob_codes;
            CREATE TABLE IF NOT EXISTS auth_oob_code_hashes (
                code_hash BLOB PRIMARY KEY NOT NULL,
                outbox_code TEXT,
                continue_url TEXT,
                request_type TEXT NOT NULL,
                uid TEXT NOT NULL,
                email TEXT NOT NULL,
                new_email TEXT,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS auth_oob_code_hashes_uid ON auth_oob_code_hashes(uid);
            CREATE TABLE IF NOT EXISTS auth_user_providers (
                provider_id TEXT NOT NULL,
                raw_id TEXT NOT NULL,
                uid TEXT NOT NULL,
                PRIMARY KEY (provider_id, raw_id)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS auth_user_providers_uid ON auth_user_providers(uid);
            CREATE TABLE IF NOT EXISTS auth_events (
                position INTEGER PRIMARY KEY AUTOINCREMENT,
                time INTEGER NOT NULL,
                type TEXT NOT NULL,
                uid TEXT NOT NULL,
                user TEXT NOT NULL
            );
            CREATE TABLE IF NOT EXISTS auth_events_trimmed (id INTEGER PRIMARY KEY CHECK (id = 0), through INTEGER NOT NULL);
            """)
        // Files from before phone numbers: the column is added (SQLite cannot add a UNIQUE column; the
        // unique index does the same).
        let columns = try database.query("PRAGMA table_info(auth_users)").compactMap { $0[1].text }
        if !columns.contains("phone") { try database.executeScript("ALTER TABLE auth_users ADD COLUMN phone TEXT;") }
        try database.executeScript("CREATE UNIQUE INDEX IF NOT EXISTS auth_users_phone ON auth_users(phone);")
        try database.checkpointInBackground()
    }

    public func close() { database.close() }

    // MARK: Users

    public func user(id: String) throws -> UserRecord? {
        try cache.withLock { cache throws -> UserRecord? in
            let now = uptimeNanoseconds()
            if externalChangeCheckNanoseconds == 0 || now &- cache.checked >= externalChangeCheckNanoseconds {
                cache.checked = now
                let version = try database.query("PRAGMA data_version").first?.first?.integer ?? 0
                if version != cache.version {
                    cache.entries.removeAll(keepingCapacity: true)
                    cache.version = version
                }
            }
            if let cached = cache.entries[id] { return cached }
            let user = try decodeFirst(database.query("SELECT record FROM auth_users WHERE uid = ?1", [.text(id)]))
            if let user {
                if cache.entries.count >= Self.cacheCapacity { cache.entries.removeAll(keepingCapacity: true) }
                cache.entries[id] = user
            }
            return user
        }
    }

    /// Runs a write to `uid`'s row with the cache locked, then drops the cached copy.
    private func writing<T>(_ uid: String, _ body: () throws -> T) throws -> T {
        try cache.withLock { cache throws -> T in
            cache.entries[uid] = nil
            return try body()
        }
    }

    public func user(email: String) throws -> UserRecord? {
        try decodeFirst(database.query("SELECT record FROM auth_users WHERE email = ?1", [.text(email)]))
    }

    public func user(phoneNumber: String) throws -> UserRecord? {
        try decodeFirst(database.query("SELECT record FROM auth_users WHERE phone = ?1", [.text(phoneNumber)]))
    }

    public func user(providerId: String, rawId: String) throws -> UserRecord? {
        try decodeFirst(database.query(
            "SELECT u.record FROM auth_user_providers p JOIN auth_users u ON u.uid = p.uid WHERE p.provider_id = ?1 AND p.raw_id = ?2",
            [.text(providerId), .text(rawId)]))
    }

    public func insert(_ user: UserRecord) throws {
        try writing(user.localId) {
            try conflictChecked {
                try database.transaction { run in
                    _ = try run("INSERT INTO auth_users (uid, record) VALUES (?1, '')", [.text(user.localId)])
                    try self.store(user, run)
                    try Self.record(.created, user, run)
                }
            }
        }
    }

    public func update(_ user: UserRecord) throws {
        try writing(user.localId) {
            try conflictChecked {
                try database.transaction { run in try self.store(user, run) }
            }
        }
    }

    /// Writes the record into its row (created already) and its linked providers into theirs.
    private func store(_ user: UserRecord, _ run: (String, [SQLiteValue]) throws -> [[SQLiteValue]]) throws {
        _ = try run(
            "UPDATE auth_users SET email = ?2, phone = ?3, record = ?4 WHERE uid = ?1",
            [.text(user.localId), user.email.map(SQLiteValue.text) ?? .null, user.phoneNumber.map(SQLiteValue.text) ?? .null,
             .text(user.storedJSON())])
        _ = try run("DELETE FROM auth_user_providers WHERE uid = ?1", [.text(user.localId)])
        for provider in user.linkedProviders ?? [] {
            _ = try run(
                "INSERT INTO auth_user_providers (provider_id, raw_id, uid) VALUES (?1, ?2, ?3)",
                [.text(provider.providerId), .text(provider.rawId), .text(user.localId)])
        }
    }

    @discardableResult
    public func modify(id: String, _ body: (inout UserRecord) throws -> Void) throws -> UserRecord? {
        try writing(id) {
            try database.transaction { run -> UserRecord? in
                guard let row = try run("SELECT record FROM auth_users WHERE uid = ?1", [.text(id)]).first else { return nil }
                var user = try decode(row[0])
                let wasDisabled = user.disabled
                try body(&user)
                user.localId = id
                do {
                    try self.store(user, run)
                } catch let failure as SQLiteDatabase.Failure where failure.isConstraintViolation {
                    throw Self.conflict(failure)
                }
                if user.disabled != wasDisabled { try Self.record(user.disabled ? .disabled : .enabled, user, run) }
                return user
            }
        }
    }

    @discardableResult
    public func delete(id: String) throws -> Bool {
        try writing(id) { try deleteRows(id) }
    }

    private func deleteRows(_ id: String) throws -> Bool {
        try database.transaction { run in
            let gone = try run("SELECT record FROM auth_users WHERE uid = ?1", [.text(id)]).first.map { try decode($0[0]) }
            let existed = gone != nil
            if let gone { try Self.record(.deleted, gone, run) }
            _ = try run("DELETE FROM auth_users WHERE uid = ?1", [.text(id)])
            _ = try run("DELETE FROM auth_user_providers WHERE uid = ?1", [.text(id)])
            // Revoked, not dropped: until pruned, a refresh with one answers USER_NOT_FOUND (the account is
            // gone, which signs the client out) rather than INVALID_REFRESH_TOKEN (which FirebaseAuth's
            // iOS SDK reports as an internal error, leaving the user signed in).
            _ = try run("UPDATE auth_refresh_tokens SET revoked = 1 WHERE uid = ?1", [.text(id)])
            _ = try run("DELETE FROM auth_oob_code_hashes WHERE uid = ?1", [.text(id)])
            return existed
        }
    }

    public func users(after: String?, limit: Int) throws -> [UserRecord] {
        let rows = try database.query(
            "SELECT record FROM auth_users WHERE uid > ?1 ORDER BY uid LIMIT ?2", [.text(after ?? ""), .integer(Int64(limit))])
        return try rows.map { try decode($0[0]) }
    }

    public func users(offset: Int, limit: Int, descending: Bool) throws -> [UserRecord] {
        let rows = try database.query(
            "SELECT record FROM auth_users ORDER BY uid \(descending ? "DESC" : "ASC") LIMIT ?1 OFFSET ?2",
            [.integer(Int64(limit)), .integer(Int64(offset))])
        return try rows.map { try decode($0[0]) }
    }

    public func userCount() throws -> Int {
        Int(try database.query("SELECT count(*) FROM auth_users").first?.first?.integer ?? 0)
    }

    public func deleteAllUsers() throws {
        try cache.withLock { cache throws in
            cache.entries.removeAll()
            try database.executeScript("DELETE FROM auth_users; DELETE FROM auth_user_providers; DELETE FROM auth_refresh_tokens; DELETE FROM auth_oob_code_hashes;")
        }
    }

    // MARK: Auth events

    /// Records `kind` of `user` in the transaction of its change; every ``AuthEventRetention/everyEvents``th
    /// event, removes those past the retention's age or count.
    private static func record(_ kind: AuthEvent.Kind, _ user: UserRecord, _ run: (String, [SQLiteValue]) throws -> [[SQLiteValue]]) throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        _ = try run(
            "INSERT INTO auth_events (time, type, uid, user) VALUES (?1, ?2, ?3, ?4)",
            [.integer(now), .text(kind.rawValue), .text(user.localId), .text(user.eventJSON)])
        let position = try run("SELECT last_insert_rowid()", [])[0][0].integer ?? 0
        guard position % AuthEventRetention.everyEvents == 0 else { return }
        let through = try run(
            "SELECT max(position) FROM auth_events WHERE time < ?1 OR position <= ?2",
            [.integer(now - AuthEventRetention.maxAgeMilliseconds), .integer(position - AuthEventRetention.maxEvents)]
        ).first?[0].integer
        guard let through else { return }
        _ = try run("DELETE FROM auth_events WHERE position <= ?1", [.integer(through)])
        _ = try run(
            "INSERT INTO auth_events_trimmed (id, through) VALUES (0, ?1) ON CONFLICT(id) DO UPDATE SET through = max(through, ?1)",
            [.integer(through)])
    }

    public func authEvents(after position: Int64, limit: Int) throws -> AuthEventPage {
        try database.transaction { run in
            let rows = try run(
                "SELECT position, time, type, uid, user FROM auth_events WHERE position > ?1 ORDER BY position LIMIT ?2",
                [.integer(position), .integer(Int64(max(0, limit)))])
            let events = rows.compactMap { row -> AuthEvent? in
                guard let position = row[0].integer, let time = row[1].integer, let kind = row[2].text.flatMap(AuthEvent.Kind.init(rawValue:)),
                    let uid = row[3].text, let user = row[4].text
                else { return nil }
                return AuthEvent(position: position, time: time, kind: kind, uid: uid, userJSON: user)
            }
            // The sequence keeps the newest position even when retention removed every row.
            let head = try run("SELECT seq FROM sqlite_sequence WHERE name = 'auth_events'", []).first?[0].integer ?? 0
            let trimmed = try run("SELECT through FROM auth_events_trimmed WHERE id = 0", []).first?[0].integer ?? 0
            return AuthEventPage(events: events, head: head, trimmedThrough: trimmed)
        }
    }

    // MARK: Refresh tokens

    public func insertRefreshToken(_ token: RefreshTokenRecord) throws {
        try database.query(Self.insertToken, Self.values(token))
    }

    public func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord? {
        let rows = try database.query(
            "SELECT hash, uid, provider, auth_time, extra_claims, issued_at, revoked FROM auth_refresh_tokens WHERE hash = ?1",
            [.blob(hash)])
        guard let row = rows.first else { return nil }
        return RefreshTokenRecord(
            tokenHash: row[0].blob ?? [], uid: row[1].text ?? "", provider: row[2].text ?? "",
            authTime: row[3].integer ?? 0, extraClaims: row[4].text, issuedAt: row[5].integer ?? 0,
            revoked: (row[6].integer ?? 0) != 0)
    }

    public func revokeRefreshTokens(uid: String) throws {
        try database.query("UPDATE auth_refresh_tokens SET revoked = 1 WHERE uid = ?1", [.text(uid)])
    }

    public func pruneRevokedRefreshTokens(issuedBefore: Int64) throws {
        try database.query("DELETE FROM auth_refresh_tokens WHERE revoked = 1 AND issued_at < ?1", [.integer(issuedBefore)])
    }

    private static let insertToken = """
        INSERT INTO auth_refresh_tokens (hash, uid, provider, auth_time, extra_claims, issued_at, revoked)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
        """

    private static func values(_ token: RefreshTokenRecord) -> [SQLiteValue] {
        [.blob(token.tokenHash), .text(token.uid), .text(token.provider), .integer(token.authTime),
         token.extraClaims.map(SQLiteValue.text) ?? .null, .integer(token.issuedAt), .integer(token.revoked ? 1 : 0)]
    }

    // MARK: Out-of-band codes

    public func insertOobCode(_ code: OobCode) throws {
        try database.query(
            """
            INSERT INTO auth_oob_code_hashes
                (code_hash, outbox_code, request_type, uid, email, new_email, created_at, expires_at, continue_url)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """,
            [.blob(SHA256.hash(code.code)), code.outboxShowsCode ? .text(code.code) : .null, .text(code.requestType),
             .text(code.uid), .text(code.email), code.newEmail.map(SQLiteValue.text) ?? .null, .integer(code.createdAt),
             .integer(code.expiresAt), code.continueUrl.map(SQLiteValue.text) ?? .null])
    }

    public func oobCode(_ code: String) throws -> OobCode? {
        guard var found = try oobCodes(where: "WHERE code_hash = ?1", [.blob(SHA256.hash(code))]).first else { return nil }
        found.code = code
        return found
    }

    public func deleteOobCode(_ code: String) throws {
        try database.query("DELETE FROM auth_oob_code_hashes WHERE code_hash = ?1", [.blob(SHA256.hash(code))])
    }

    public func oobCodes() throws -> [OobCode] { try oobCodes(where: "", []) }

    private func oobCodes(where clause: String, _ parameters: [SQLiteValue]) throws -> [OobCode] {
        let rows = try database.query(
            """
            SELECT outbox_code, request_type, uid, email, new_email, created_at, expires_at, continue_url
            FROM auth_oob_code_hashes \(clause)
            ORDER BY created_at
            """,
            parameters)
        return rows.map { row in
            OobCode(
                code: row[0].text ?? "", requestType: row[1].text ?? "", uid: row[2].text ?? "", email: row[3].text ?? "",
                newEmail: row[4].text, createdAt: row[5].integer ?? 0, expiresAt: row[6].integer ?? 0,
                outboxShowsCode: row[0].text != nil, continueUrl: row[7].text)
        }
    }

    // MARK: Encoding

    private func decode(_ value: SQLiteValue) throws -> UserRecord {
        try UserRecord(storedJSON: value.text ?? "")
    }

    private func decodeFirst(_ rows: [[SQLiteValue]]) throws -> UserRecord? {
        guard let row = rows.first else { return nil }
        return try decode(row[0])
    }

    private func conflictChecked(_ body: () throws -> Void) throws {
        do { try body() } catch let failure as SQLiteDatabase.Failure where failure.isConstraintViolation {
            throw Self.conflict(failure)
        }
    }

    /// Which uniqueness a failed write broke, from SQLite's message (`UNIQUE constraint failed: auth_users.phone`).
    private static func conflict(_ failure: SQLiteDatabase.Failure) -> AccountStoreConflict {
        let text = failure.description
        if text.contains("auth_users.phone") { return AccountStoreConflict(.phoneNumber) }
        if text.contains("auth_user_providers") { return AccountStoreConflict(.provider) }
        if text.contains("auth_users.uid") { return AccountStoreConflict(.id) }
        return AccountStoreConflict(.email)
    }
}
