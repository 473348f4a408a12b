public import HearthAuth

extension AuthService {
    /// The service over a data directory: accounts in `<directory>/auth.sqlite` (owner-only), the signing
    /// key in `<directory>/auth-signing-key.pem` (made on first use), settings in `<directory>/auth-*.json`.
    public static func open(dataDirectory: String, configuration: AuthConfiguration) throws -> AuthService {
        let directory = dataDirectory.hasSuffix("/") ? dataDirectory : dataDirectory + "/"
        var configuration = configuration
        if configuration.settingsStorage == nil { configuration.settingsStorage = AuthSettingsDirectory(directory: directory) }
        return try AuthService(
            configuration: configuration, store: SQLiteAccountStore(path: directory + "auth.sqlite"),
            key: SigningKey.loadOrCreate(in: directory))
    }
}
