import Foundation
import HearthSQL

/// Everything the SDK knows of the signed-in user: the account as the server last described it and the
/// session's tokens. It is what ``AuthUserStore`` keeps between runs of the app.
struct StoredUser: Codable, Equatable, Sendable {
    var uid: String
    var email: String?
    var displayName: String?
    var photoURL: String?
    var emailVerified: Bool
    var isAnonymous: Bool
    /// The sign-in providers linked to the account (`password`); empty for an anonymous one.
    var providers: [String]
    /// Each provider's record of the user, as `accounts:lookup` gives it (nil in users saved by older
    /// versions, until the next lookup).
    var providerInfo: [StoredProviderInfo]?
    var createdAt: Date?
    var lastSignInAt: Date?
    var idToken: String
    var refreshToken: String
    var expiresAt: Date

    /// A user from a sign-in's tokens and the account `accounts:lookup` returned.
    init(grant: TokenGrant, account: [String: Any]) {
        uid = grant.uid
        idToken = grant.idToken
        refreshToken = grant.refreshToken
        expiresAt = grant.expiresAt
        emailVerified = false
        isAnonymous = true
        providers = []
        update(from: account)
    }

    /// Takes the profile fields of an `accounts:lookup` user (or an `accounts:update` answer).
    mutating func update(from account: [String: Any]) {
        // An account without an email has none (unlinking `password` removes it).
        email = (account["email"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        displayName = account["displayName"] as? String
        photoURL = account["photoUrl"] as? String
        if let verified = account["emailVerified"] as? Bool { emailVerified = verified }
        if let infos = account["providerUserInfo"] as? [[String: Any]] {
            providers = infos.compactMap { $0["providerId"] as? String }
            providerInfo = infos.compactMap(StoredProviderInfo.init(entry:))
        } else if email != nil, account["passwordHash"] != nil || account["passwordUpdatedAt"] != nil {
            providers = ["password"]
        }
        isAnonymous = providers.isEmpty && email == nil
        createdAt = Self.date(milliseconds: account["createdAt"]) ?? createdAt
        lastSignInAt = Self.date(milliseconds: account["lastLoginAt"]) ?? lastSignInAt
    }

    mutating func take(_ grant: TokenGrant) {
        idToken = grant.idToken
        refreshToken = grant.refreshToken
        expiresAt = grant.expiresAt
    }

    /// Firebase sends times as strings of milliseconds since 1970.
    private static func date(milliseconds value: Any?) -> Date? {
        guard let text = value as? String, let milliseconds = Double(text) else { return nil }
        return Date(timeIntervalSince1970: milliseconds / 1000)
    }
}

/// One provider's record of the user (a `providerUserInfo` entry).
struct StoredProviderInfo: Codable, Equatable, Sendable {
    var providerID: String
    /// The user's id at the provider: `federatedId` as FirebaseAuth reads it, else `rawId`.
    var uid: String
    var displayName: String?
    var photoURL: String?
    var email: String?
    var phoneNumber: String?

    init?(entry: [String: Any]) {
        guard let provider = entry["providerId"] as? String,
            let uid = (entry["federatedId"] as? String) ?? (entry["rawId"] as? String) ?? (entry["phoneNumber"] as? String)
        else { return nil }
        providerID = provider
        self.uid = uid
        displayName = entry["displayName"] as? String
        photoURL = entry["photoUrl"] as? String
        email = entry["email"] as? String
        phoneNumber = entry["phoneNumber"] as? String
    }
}

/// Keeps the signed-in user between runs of the app, so it can skip its login screen.
protocol AuthUserStore: Sendable {
    func load() -> StoredUser?
    /// Saves the user, or forgets it (nil) on sign-out.
    func save(_ user: StoredUser?)
}

/// The store on Linux (and wherever there is no Keychain): a JSON file readable by its owner only, under
/// the SDK's data directory (`HEARTH_CLIENT_CACHE_DIR`, else `$XDG_DATA_HOME/hearth` or
/// `~/.local/share/hearth`), one per app and API key.
struct FileAuthUserStore: AuthUserStore {
    let path: String

    init(directory: String, appName: String, apiKey: String) {
        let name = "auth_\(appName)_\(apiKey)".map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" }
        path = directory + "/" + String(name) + ".json"
    }

    func load() -> StoredUser? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(StoredUser.self, from: data)
        } catch {
            ClientLog.warning("the saved sign-in \(path) could not be read (\(error)); the app starts signed out")
            return nil
        }
    }

    func save(_ user: StoredUser?) {
        guard let user else {
            try? FileManager.default.removeItem(atPath: path)
            return
        }
        let directory = (path as NSString).deletingLastPathComponent
        guard ClientFiles.prepare(directory), let data = try? JSONEncoder().encode(user) else {
            ClientLog.warning("the sign-in could not be saved under \(directory): the next start will be signed out")
            return
        }
        // Written beside and renamed over, so a crash leaves the old file or the new one, never half.
        let temporary = path + ".tmp"
        guard OwnerOnlyFiles.createFile(temporary) == 0, let handle = FileHandle(forWritingAtPath: temporary) else {
            ClientLog.warning("the sign-in could not be saved to \(path)")
            return
        }
        handle.write(data)
        try? handle.truncate(atOffset: UInt64(data.count))
        try? handle.close()
        if rename(temporary, path) != 0 { ClientLog.warning("the sign-in could not be saved to \(path)") }
    }
}

/// A store that keeps nothing (tests, and apps that want a fresh sign-in every run).
struct NoAuthUserStore: AuthUserStore {
    func load() -> StoredUser? { nil }
    func save(_ user: StoredUser?) {}
}
