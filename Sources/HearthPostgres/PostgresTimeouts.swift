/// How long the PostgreSQL engine waits for PostgreSQL, in one place. While PostgreSQL is down or
/// unreachable, a write fails within these bounds instead of hanging (docs/storage.md, PostgreSQL).
public enum PostgresTimeouts {
    /// Longest a connection attempt may take: TCP (or Unix socket) connect, TLS, authentication. A
    /// refused connection fails at once; a host that drops packets costs this long.
    public static let connect: Duration = .seconds(3)

    /// Longest one commit may take once the storage thread starts it, a reconnect and one retry
    /// included. A batch waits at most for the commit in progress and then its own, so an append fails
    /// within twice this (10 s) however PostgreSQL fails; usually at once, when it refuses connections.
    public static let commit: Duration = .seconds(5)

    /// Longest one call of a ``PostgresDatabase`` may take: waiting for one of its connections, connecting
    /// when it has none open, and its statements (a transaction's, all of them). Sign-ins and token
    /// checks are short statements, so a call that takes this long means PostgreSQL is gone or locked up.
    public static let query: Duration = .seconds(5)

    /// Longest a long operation (load, import, backup, compact) may wait without a byte from PostgreSQL
    /// before it gives the connection up. Long, because a VACUUM or the first rows of a large scan
    /// answer nothing for a while; the bound is there so that a vanished server ends the wait.
    public static let silence: Duration = .seconds(120)
}
