public import HearthAuth
public import HearthPostgres

/// The project's settings in `hearth_auth_settings`, a row each (`sign_in_methods`,
/// `identity_providers`), shared by every node: a change an admin makes on one node is seen by the
/// others at their next re-read (within a second, ``AuthSettingsStorage``).
public struct PostgresAuthSettings: AuthSettingsStorage {
    public let database: PostgresDatabase

    /// - Throws: `StorageError` when the auth tables cannot be made or checked.
    public init(database: PostgresDatabase) throws {
        try PostgresAuthSchema.prepare(database)
        self.database = database
    }

    public func load(_ name: AuthSettingName) throws -> String? {
        let rows = try database.query(
            "SELECT value FROM hearth_auth_settings WHERE name = $1", [.text(name.rawValue)], doing: "reading the setting \(name.rawValue)")
        return try rows.first?.string(at: 0)
    }

    public func save(_ name: AuthSettingName, _ text: String) throws {
        _ = try database.query(
            """
            INSERT INTO hearth_auth_settings (name, value) VALUES ($1, $2)
            ON CONFLICT (name) DO UPDATE SET value = excluded.value
            """,
            [.text(name.rawValue), .text(text)], doing: "saving the setting \(name.rawValue)")
    }
}
