/// PostgreSQL refused a statement because it would break a unique constraint (SQLSTATE 23505): another
/// row holds the key. Nothing of the statement's transaction was stored. `constraint` names the
/// constraint, so a caller that gave its constraints names can tell which key is taken.
///
///     catch let violation as PostgresUniqueViolation where violation.constraint == "hearth_auth_users_email_key" { … }
public struct PostgresUniqueViolation: Error, Sendable, CustomStringConvertible {
    /// The constraint's name, as PostgreSQL reports it (`<table>_<column>_key` unless named otherwise).
    public let constraint: String
    /// PostgreSQL's message, which names the constraint (not the value).
    public let message: String

    public var description: String { "PostgreSQL refused a duplicate key (\(constraint)): \(message)" }
}
