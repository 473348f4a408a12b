public import HearthAuth
public import HearthPostgres
import HearthStorage

/// The project's sign-in methods in `hearth_auth_settings` (the row `sign_in_methods`, in
/// ``SignInMethods/storedJSON``'s form), shared by every node: a change an admin makes on one node is
/// seen by the others at their next re-read (within a second, ``SignInMethodsStorage``).
public struct PostgresSignInMethods: SignInMethodsStorage {
    public let database: PostgresDatabase
    static let settingName = "sign_in_methods"

    /// - Throws: `StorageError` when the auth tables cannot be made or checked.
    public init(database: PostgresDatabase) throws {
        try PostgresAuthSchema.prepare(database)
        self.database = database
    }

    public func load() throws -> SignInMethods? {
        let rows = try database.query(
            "SELECT value FROM hearth_auth_settings WHERE name = $1", [.text(Self.settingName)], doing: "reading the sign-in methods")
        guard let text = try rows.first?.string(at: 0) else { return nil }
        guard let methods = SignInMethods(storedJSON: text) else {
            throw StorageError(.corrupt, "the sign-in methods stored at \(database.location) are not JSON (hearth_auth_settings, '\(Self.settingName)'). Delete the row to return to the defaults.")
        }
        return methods
    }

    public func save(_ methods: SignInMethods) throws {
        _ = try database.query(
            """
            INSERT INTO hearth_auth_settings (name, value) VALUES ($1, $2)
            ON CONFLICT (name) DO UPDATE SET value = excluded.value
            """,
            [.text(Self.settingName), .text(methods.storedJSON)], doing: "saving the sign-in methods")
    }
}
