public import HearthAuth
import HearthPostgres
public import HearthSupport

extension AuthService {
    /// The service of a cluster node over the PostgreSQL database at `postgresURL`: accounts, sessions and
    /// codes in its `hearth_auth_` tables (``PostgresAccountStore``), the signing key every node shares
    /// (made by the first node that finds none) and the settings (sign-in methods, identity providers),
    /// on one pool of ``postgresConnectionsMax`` connections. Nothing of auth is kept in the data
    /// directory then. `log` hears what an operator should know later
    /// (the connection that keeps the account cache fresh broke, and when it is back).
    ///
    ///     let auth = try AuthService.open(postgresURL: url, configuration: configuration, log: .standardError)
    ///
    /// - Throws: `StorageError` when PostgreSQL cannot be reached or its auth tables are a newer Hearth's
    ///   (the message names the server without its password and says what to check).
    public static func open(postgresURL: String, configuration: AuthConfiguration, log: Log = .silent) throws -> AuthService {
        let database = try PostgresDatabase(url: postgresURL, connectionsMax: postgresConnectionsMax, log: log)
        let store = try PostgresAccountStore(database: database)
        var configuration = configuration
        configuration.settingsStorage = try PostgresAuthSettings(database: database)
        return try AuthService(configuration: configuration, store: store, key: SigningKey.loadOrCreate(in: database))
    }

    /// The pool's size for `open(postgresURL:)`: measured in docs/auth.md ("With PostgreSQL").
    public static let postgresConnectionsMax = 4
}
