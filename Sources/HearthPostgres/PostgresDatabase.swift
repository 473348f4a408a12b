import Dispatch
public import HearthStorage
public import HearthSupport
import Synchronization

/// A small pool of connections to one PostgreSQL database, for short statements from many threads at
/// once: what code that is not a storage engine (the accounts of HearthAuthPostgres) uses PostgreSQL
/// through, without seeing libpq.
///
///     let database = try PostgresDatabase(url: "postgresql://hearth:secret@db:5432/hearth")
///     let rows = try database.query("SELECT record FROM hearth_auth_users WHERE uid = $1", [.text(uid)], doing: "reading an account")
///     try database.transaction(doing: "changing an account") { transaction in
///         let found = try transaction.run([PostgresStatement("SELECT … FOR UPDATE", [.text(uid)])])
///         _ = try transaction.run([PostgresStatement("UPDATE …", […])])
///     }
///
/// Each call takes an idle connection (or opens one, up to `connectionsMax`; beyond that it waits for
/// one), runs its statements in one pipeline (one round trip) and puts the connection back. A connection
/// that broke is closed and the next call opens a new one; an idle one that PostgreSQL closed meanwhile
/// (a restart) is noticed before it is used. Nothing waits without a bound: a call fails within
/// `PostgresTimeouts.query` (5 s) however PostgreSQL fails, and at once while PostgreSQL refuses
/// connections (`UNAVAILABLE`, naming the server without its password and what to check).
///
/// Statements that PostgreSQL refuses throw ``PostgresUniqueViolation`` for a unique constraint (so a
/// store can tell which one) and ``StorageError`` for everything else, as do failures to reach it.
public final class PostgresDatabase: Sendable {
    /// Most connections open at once. HearthAuthPostgres uses four: on two cores, two to four
    /// connections commit half as much again as one, and more gave nothing (docs/auth.md, "The pool").
    public let connectionsMax: Int
    let endpoint: PostgresEndpoint
    /// `postgresql://user@host:port/dbname`: the URL without its password, for messages.
    public var location: String { endpoint.description }

    /// One permit per connection that may be open; a call holds one while it uses a connection.
    private let permits: DispatchSemaphore
    private let idle = Mutex<[PooledConnection]>([])
    /// After a failed connect, calls that need a new connection fail at once for `reconnectDelay` rather
    /// than each waiting for a connect that is likely to fail the same way (a host that drops packets
    /// costs `PostgresTimeouts.connect` per attempt).
    private let connectFailure = Mutex<(until: ContinuousClock.Instant, error: PostgresError)?>(nil)
    static let reconnectDelay: Duration = .milliseconds(500)
    private let opened = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)
    let log: Log

    /// A pool for the database at `url` (`postgresql://user:password@host:port/dbname`, or anything else
    /// libpq accepts as a URL). Connects at once, so a wrong URL or a stopped server is reported here.
    ///
    /// - Throws: ``StorageError``: `.invalidData` for a URL libpq does not accept, `.unavailable` when
    ///   PostgreSQL cannot be reached (with what to check); the message never holds the password.
    public init(url: String, connectionsMax: Int = 4, log: Log = .silent) throws(StorageError) {
        precondition(connectionsMax > 0, "a pool needs at least one connection")
        endpoint = try PostgresEndpoint(url: url)
        self.connectionsMax = connectionsMax
        permits = DispatchSemaphore(value: connectionsMax)
        self.log = log
        let first = try connect(by: .now + PostgresTimeouts.connect, doing: "connecting")
        idle.withLock { $0.append(PooledConnection(first)) }
    }

    deinit { close() }

    /// Closes the idle connections; calls made after this fail with `.closed`. Connections in use are
    /// closed when their calls end.
    public func close() {
        closed.store(true, ordering: .relaxed)
        let connections = idle.withLock { idle in
            defer { idle.removeAll() }
            return idle
        }
        for pooled in connections {
            pooled.connection.adopt()
            pooled.connection.close()
        }
    }

    /// Connections opened so far, the first included (more than `connectionsMax` means some were
    /// replaced after they broke).
    public var connectionsOpened: Int { opened.load(ordering: .relaxed) }

    // MARK: Statements

    /// Runs one statement and returns its rows. `doing` says what for, in messages ("reading an account").
    ///
    /// - Throws: ``PostgresUniqueViolation`` or ``StorageError`` (see the type's summary).
    public func query(_ sql: String, _ parameters: [PostgresParameter] = [], doing: String) throws -> PostgresRows {
        try run([PostgresStatement(sql, parameters)], doing: doing)[0]
    }

    /// Runs `statements` in one pipeline (one round trip) as one implicit transaction: all of them are
    /// committed, or none when one fails. Returns each statement's rows, in order.
    ///
    /// - Throws: ``PostgresUniqueViolation`` or ``StorageError`` (see the type's summary).
    public func run(_ statements: [PostgresStatement], doing: String) throws -> [PostgresRows] {
        try withConnection(doing: doing) { lease in try lease.run(statements) }
    }

    /// Runs `body` in a transaction on one connection: `BEGIN` goes with its first statements, `COMMIT`
    /// follows when it returns, `ROLLBACK` when it throws (its error is rethrown). Row locks taken with
    /// `SELECT … FOR UPDATE` are held until then, so `body` must be quick and must not call the pool
    /// again (it would wait for a connection of its own). A statement that fails aborts the transaction:
    /// let its error out of `body`.
    ///
    /// - Throws: what `body` throws; ``PostgresUniqueViolation`` or ``StorageError`` from the statements.
    public func transaction<Value>(doing: String, _ body: (PostgresTransaction) throws -> Value) throws -> Value {
        try withConnection(doing: doing) { lease in
            let transaction = PostgresTransaction(lease)
            do {
                let value = try body(transaction)
                if transaction.began { _ = try lease.run([PostgresStatement("COMMIT")]) }
                return value
            } catch {
                if transaction.began && !lease.broken {
                    // A rollback that fails leaves the session in an unknown state: not reused.
                    do { _ = try lease.run([PostgresStatement("ROLLBACK")]) } catch { lease.broken = true }
                }
                throw error
            }
        }
    }

    /// Starts listening on `channel` (a plain lower-case name) on a connection of its own, beside the
    /// pool's: `handler` is called on the listener's thread, one event at a time. Notifications are sent
    /// with `SELECT pg_notify('channel', payload)` or by a trigger, and arrive once their transaction
    /// commits.
    public func listen(to channel: String, _ handler: @escaping @Sendable (PostgresNotification) -> Void) -> PostgresListener {
        PostgresListener(endpoint: endpoint, channel: channel, log: log, handler: handler)
    }

    // MARK: Connections

    /// Takes a connection for `body` within `PostgresTimeouts.query`, and puts it back after (closed
    /// instead when it broke).
    private func withConnection<Value>(doing: String, _ body: (Lease) throws -> Value) throws -> Value {
        let deadline = ContinuousClock.now + PostgresTimeouts.query
        guard !closed.load(ordering: .relaxed) else {
            throw StorageError(.closed, "the connections to PostgreSQL at \(endpoint) were closed (hearth is stopping) while \(doing).")
        }
        guard permits.wait(timeout: .now() + .nanoseconds(Self.nanoseconds(PostgresTimeouts.query))) == .success else {
            throw StorageError(.busy, "all \(connectionsMax) connections to PostgreSQL at \(endpoint) stayed busy for \(PostgresTimeouts.query) while \(doing). PostgreSQL is slow or something holds its locks: check pg_stat_activity.")
        }
        defer { permits.signal() }
        let connection = try checkOut(by: deadline, doing: doing)
        let lease = Lease(connection, deadline: deadline, database: self, doing: doing)
        defer {
            if lease.broken || closed.load(ordering: .relaxed) {
                connection.close()
            } else {
                idle.withLock { $0.append(PooledConnection(connection)) }
            }
        }
        return try body(lease)
    }

    /// An idle connection that is still open, or a new one.
    private func checkOut(by deadline: ContinuousClock.Instant, doing: String) throws(StorageError) -> PostgresConnection {
        while let pooled = idle.withLock({ $0.popLast() }) {
            pooled.connection.adopt()
            if pooled.connection.isOpen { return pooled.connection }
            pooled.connection.close()
        }
        if let recent = connectFailure.withLock({ failure in failure.flatMap { $0.until > .now ? $0.error : nil } }) {
            throw StorageError(recent, at: endpoint, doing: doing)
        }
        return try connect(by: min(deadline, .now + PostgresTimeouts.connect), doing: doing)
    }

    /// A new connection with the session set up (`sessionSettings`).
    private func connect(by deadline: ContinuousClock.Instant, doing: String) throws(StorageError) -> PostgresConnection {
        do {
            let connection = try PostgresConnection(endpoint, deadline: deadline)
            _ = try connection.run(Self.sessionSettings, deadline: .at(deadline))
            opened.add(1, ordering: .relaxed)
            connectFailure.withLock { $0 = nil }
            return connection
        } catch {
            connectFailure.withLock { $0 = (.now + Self.reconnectDelay, error) }
            throw StorageError(error, at: endpoint, doing: doing)
        }
    }

    /// Server-side bounds to match the client's, so that PostgreSQL lets go too: a lock wait ends with
    /// an error (the connection stays usable) before the call's own deadline would drop the connection;
    /// a statement cannot run past the deadline; and a transaction whose client vanished mid-way (a
    /// crashed node holding a row lock) is ended. `synchronous_commit` is turned on when the server or
    /// role has it off: an acknowledged sign-up is on disk.
    static let sessionSettings: [PostgresStatement] = [
        PostgresStatement("SET lock_timeout = \(milliseconds(PostgresTimeouts.query) * 4 / 5)"),
        PostgresStatement("SET statement_timeout = \(milliseconds(PostgresTimeouts.query))"),
        PostgresStatement("SET idle_in_transaction_session_timeout = \(milliseconds(PostgresTimeouts.query) * 2)"),
        PostgresStatement("SELECT set_config('synchronous_commit', 'on', false) WHERE current_setting('synchronous_commit') = 'off'"),
    ]

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    static func nanoseconds(_ duration: Duration) -> Int {
        Int(clamping: duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// A statement's failure as the error callers see.
    func publicError(_ error: PostgresError, doing: String) -> any Error {
        if error.kind == .server(sqlState: PostgresError.uniqueViolation) {
            return PostgresUniqueViolation(constraint: error.constraint ?? "", message: error.message)
        }
        return StorageError(error, at: endpoint, doing: doing)
    }
}

/// A connection on its way between a pool's idle list and the one thread that uses it: it only ever
/// crosses threads through the pool's lock, and the thread that takes it adopts it before use.
private final class PooledConnection: @unchecked Sendable {
    let connection: PostgresConnection
    init(_ connection: PostgresConnection) { self.connection = connection }
}

/// A connection lent to one call: its deadline, and whether it broke (then it is closed, not put back).
final class Lease {
    let connection: PostgresConnection
    let deadline: ContinuousClock.Instant
    private let database: PostgresDatabase
    private let doing: String
    var broken = false

    init(_ connection: PostgresConnection, deadline: ContinuousClock.Instant, database: PostgresDatabase, doing: String) {
        self.connection = connection
        self.deadline = deadline
        self.database = database
        self.doing = doing
    }

    func run(_ statements: [PostgresStatement]) throws -> [PostgresRows] {
        do {
            return try connection.run(statements, deadline: .at(deadline)).map(PostgresRows.init)
        } catch {
            if error.breaksConnection { broken = true }
            throw database.publicError(error, doing: doing)
        }
    }
}
