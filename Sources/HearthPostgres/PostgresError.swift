import HearthStorage

/// A failed exchange with PostgreSQL, as the connection saw it: what kind of failure (which decides what
/// the storage thread does next) and the server's or libpq's message. Turned into a `StorageError` for
/// callers by `StorageError(_:at:)`.
struct PostgresError: Error, Sendable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        /// No connection could be made (refused, unknown host, authentication, no such database).
        case connect
        /// The connection broke, or PostgreSQL did not answer before the deadline. Whatever was sent may
        /// or may not have been committed.
        case connectionLost
        case timedOut
        /// The server refused a statement; the connection is still usable. `sqlState` is the SQLSTATE
        /// (`23505`, `53100`, …: https://www.postgresql.org/docs/current/errcodes-appendix.html).
        case server(sqlState: String)
    }

    var kind: Kind
    /// libpq's or the server's message, one line.
    var message: String
    /// The constraint a refused statement broke (`hearth_auth_users_email_key`), when the server names one.
    var constraint: String?

    init(_ kind: Kind, _ message: String, constraint: String? = nil) {
        self.kind = kind
        self.message = message
        self.constraint = constraint
    }

    /// True when the connection must be dropped: nothing more can be sent on it.
    var breaksConnection: Bool {
        if case .server = kind { return false }
        return true
    }

    var description: String { "\(kind): \(message)" }

    /// SQLSTATE `unique_violation`: on `hearth_changes`, another commit took the sequence.
    static let uniqueViolation = "23505"
}

/// Why a streamed query stopped: PostgreSQL failed, or the row handler found data Hearth never writes.
enum PostgresStreamError: Error {
    case postgres(PostgresError)
    case rejected(StorageError)
}
