/// The statements of one ``PostgresDatabase/transaction(doing:_:)``, on the connection it holds until the
/// transaction ends. `BEGIN` is sent with the first statements, so a transaction that reads, decides and
/// writes costs three round trips: read, write, commit.
///
///     try database.transaction(doing: "changing an account") { transaction in
///         let rows = try transaction.run([PostgresStatement("SELECT record FROM t WHERE uid = $1 FOR UPDATE", [.text(uid)])])[0]
///         …
///     }
public final class PostgresTransaction {
    private let lease: Lease
    /// Whether `BEGIN` was sent (a transaction that ran nothing needs no `COMMIT`).
    private(set) var began = false

    init(_ lease: Lease) { self.lease = lease }

    /// Runs `statements` in one pipeline inside the transaction and returns each one's rows.
    ///
    /// - Throws: ``PostgresUniqueViolation`` or ``StorageError``; the transaction is then aborted, and
    ///   is rolled back when the error leaves the transaction's body.
    public func run(_ statements: [PostgresStatement]) throws -> [PostgresRows] {
        guard !began else { return try lease.run(statements) }
        began = true
        return Array(try lease.run([PostgresStatement("BEGIN")] + statements).dropFirst())
    }
}
