public import HearthCrypto

/// How a user's password is stored. New and re-hashed passwords use argon2id; users imported from a
/// Firebase export keep Firebase's scrypt hash until their first successful sign-in re-hashes it.
public enum PasswordCredential: Codable, Sendable, Equatable {
    /// An argon2id PHC string (it names its own parameters).
    case argon2id(String)
    /// Firebase's modified scrypt (docs/auth.md §7.2): the hash, the user's salt and the project parameters.
    case firebaseScrypt(hash: [UInt8], salt: [UInt8], parameters: FirebaseScrypt)

    public func verify(_ password: String) -> Bool {
        switch self {
        case .argon2id(let stored): return Argon2id.verify(password, against: stored)
        case .firebaseScrypt(let hash, let salt, let parameters):
            return parameters.verify(password, salt: salt, expected: hash)
        }
    }
}

/// One account. Times follow the wire: `createdAt`, `lastLoginAt`, `passwordUpdatedAt` in milliseconds,
/// `validSince` in seconds (the revocation watermark, docs/auth.md §4.2).
public struct UserRecord: Codable, Sendable, Equatable {
    public var localId: String
    /// Stored lower-cased; lookups are case-insensitive.
    public var email: String?
    public var emailVerified: Bool = false
    public var displayName: String?
    public var photoUrl: String?
    public var password: PasswordCredential?
    public var passwordUpdatedAt: Int64?
    public var validSince: Int64
    public var createdAt: Int64
    public var lastLoginAt: Int64?
    public var lastRefreshAt: Int64?
    public var disabled: Bool = false
    /// Custom claims as a JSON object's text (what admins set with `set_custom_user_claims`).
    public var customAttributes: String?
    /// The address before the last email change (for RECOVER_EMAIL).
    public var initialEmail: String?
    /// E.164 (`+15555550100`), unique like the email; an attribute only (no SMS sign-in).
    public var phoneNumber: String?
    /// Sign-in providers linked by admins (`google.com`, …): shown in lookups, found by `federatedUserId`.
    public var linkedProviders: [LinkedProvider]?
    /// Signed in by an emailed link at least once: the account has the `password` provider without a password.
    public var usesEmailLink: Bool?

    public init(localId: String, createdAt: Int64) {
        self.localId = localId
        self.createdAt = createdAt
        validSince = createdAt / 1000
    }

    /// The provider of a session started from this record without a custom token.
    var isAnonymous: Bool { email == nil && password == nil && phoneNumber == nil && (linkedProviders ?? []).isEmpty }

    /// Whether the account has the `password` provider: a password, or sign-in by emailed link.
    var hasPasswordProvider: Bool { email != nil && (password != nil || usesEmailLink == true) }

    /// Sign-in methods for createAuthUri: `password`, or `emailLink` for an address without a password
    /// (unless the account came from a provider and never used a link), then each linked provider.
    var signInMethods: [String] {
        var methods: [String] = []
        let providers = (linkedProviders ?? []).map(\.providerId)
        if password != nil {
            methods.append("password")
        } else if email != nil && (usesEmailLink == true || providers.isEmpty) {
            methods.append("emailLink")
        }
        for provider in providers where !methods.contains(provider) { methods.append(provider) }
        return methods
    }
}

/// A provider an admin linked to an account (`provider_to_link`, or `providerUserInfo` on import).
public struct LinkedProvider: Codable, Sendable, Equatable {
    public var providerId: String
    public var rawId: String
    public var email: String?
    public var displayName: String?
    public var photoUrl: String?
    public var phoneNumber: String?
    /// The user's handle at the provider (GitHub's login).
    public var screenName: String?

    public init(providerId: String, rawId: String) {
        self.providerId = providerId
        self.rawId = rawId
    }
}
