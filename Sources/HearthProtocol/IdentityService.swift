public import HearthCore

/// What the database server needs from an identity provider, and nothing more: to check an ID token, to
/// ask whether an account still accepts a token it issued, and to answer its own HTTP endpoints on the
/// database's port. HearthAuth's `AuthService` is one; the server knows only this protocol, so it builds
/// without accounts, SQLite or cryptography behind it (a cluster node could verify against another
/// provider, tests with a double).
public protocol IdentityService: AnyObject, Sendable {
    /// The verified identity of an ID token, or why it is refused.
    func verifyIDToken(_ token: String) -> Result<VerifiedIdentity, IdentityRefusal>
    /// Whether the account still accepts tokens issued at `issuedAt` (seconds): false once it is disabled,
    /// deleted, or its sessions were revoked after that time.
    func accountAllows(uid: String, issuedAt: Int64) -> Bool
    /// Whether `path` is one of the provider's own endpoints (Firebase Auth's REST API).
    func handles(path: String) -> Bool
    /// Answers one of those requests. May block (password hashing): the server calls it off its loop.
    func handle(_ request: HTTPRequest) -> HTTPResponse
}

/// Who a verified ID token speaks for.
public struct VerifiedIdentity: Sendable, Equatable {
    public var uid: String
    /// Seconds since 1970.
    public var issuedAt: Int64
    /// Seconds since 1970.
    public var expiresAt: Int64
    /// The rules' `auth` variable: `{"uid", "provider", "token": {claims}}`.
    public var auth: Node

    public init(uid: String, issuedAt: Int64, expiresAt: Int64, auth: Node) {
        self.uid = uid
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.auth = auth
    }
}

/// Why an ID token was refused.
public enum IdentityRefusal: Error, Sendable, Equatable {
    /// Not a token at all (not a JWT, claims out of range): refused in every mode.
    case malformed
    case expired
    /// Signature, issuer, audience or the like.
    case invalid
}
