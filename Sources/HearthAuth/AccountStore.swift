/// A refresh token as stored: only the SHA-256 of the token is kept, so a leaked database does not leak
/// sessions. Rotated or revoked tokens keep their row with `revoked` set, so reuse is told apart from
/// garbage (TOKEN_EXPIRED vs INVALID_REFRESH_TOKEN).
public struct RefreshTokenRecord: Sendable, Equatable {
    public var tokenHash: [UInt8]
    public var uid: String
    /// `password`, `anonymous`, `custom`.
    public var provider: String
    /// Seconds: when the session's sign-in happened (kept across refreshes).
    public var authTime: Int64
    /// Developer claims from a custom token (a JSON object's text), carried into every refreshed ID token.
    public var extraClaims: String?
    /// Seconds.
    public var issuedAt: Int64
    public var revoked: Bool

    public init(
        tokenHash: [UInt8], uid: String, provider: String, authTime: Int64, extraClaims: String?, issuedAt: Int64,
        revoked: Bool
    ) {
        self.tokenHash = tokenHash
        self.uid = uid
        self.provider = provider
        self.authTime = authTime
        self.extraClaims = extraClaims
        self.issuedAt = issuedAt
        self.revoked = revoked
    }
}

/// An out-of-band code (email verification, password reset), kept until used or expired.
///
/// Stores keep only a SHA-256 of `code` to find it by, as for refresh tokens: a copy of the database must
/// not hand out password resets. The code itself is kept only when `outboxShowsCode` (the outbox is how
/// codes reach people: emulator mode, or no mailer configured).
public struct OobCode: Sendable, Equatable {
    /// The code; empty when read back from ``AccountStore/oobCodes()`` for a code the outbox may not show.
    public var code: String
    public var requestType: String
    public var uid: String
    public var email: String
    public var newEmail: String?
    /// Milliseconds.
    public var createdAt: Int64
    public var expiresAt: Int64
    /// Whether the store keeps the code itself so that the outbox can list it.
    public var outboxShowsCode: Bool
    /// Where the link leads afterwards (already checked against the authorized domains), so that the
    /// outbox's link is the emailed one and an email sign-in link can redirect.
    public var continueUrl: String?

    public init(
        code: String, requestType: String, uid: String, email: String, newEmail: String?, createdAt: Int64, expiresAt: Int64,
        outboxShowsCode: Bool = true, continueUrl: String? = nil
    ) {
        self.code = code
        self.requestType = requestType
        self.uid = uid
        self.email = email
        self.newEmail = newEmail
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.outboxShowsCode = outboxShowsCode
        self.continueUrl = continueUrl
    }
}

/// Where accounts, refresh tokens and out-of-band codes live. Implementations are thread-safe.
public protocol AccountStore: AnyObject, Sendable {
    func user(id: String) throws -> UserRecord?
    /// `email` already lower-cased.
    func user(email: String) throws -> UserRecord?
    /// Throws ``AccountStoreConflict`` when the id or email is taken.
    func insert(_ user: UserRecord) throws
    /// Replaces the record with the same `localId`; throws ``AccountStoreConflict`` when the new email is taken.
    func update(_ user: UserRecord) throws
    /// Reads, changes and writes `id`'s record atomically (nil when there is no such user). Use it for every
    /// change made after slow work (hashing), so a concurrent change (an admin disabling the account) is
    /// not overwritten. `body` must not call the store. Throws ``AccountStoreConflict`` for a taken email.
    @discardableResult func modify(id: String, _ body: (inout UserRecord) throws -> Void) throws -> UserRecord?
    /// Deletes the user, their refresh tokens and codes. Returns whether the user existed.
    @discardableResult func delete(id: String) throws -> Bool
    /// Users in `localId` order after `after`, at most `limit`.
    func users(after: String?, limit: Int) throws -> [UserRecord]
    /// One page of users in `localId` order, highest first when `descending`: `limit` after skipping `offset`.
    func users(offset: Int, limit: Int, descending: Bool) throws -> [UserRecord]
    func userCount() throws -> Int
    /// Deletes every account (the emulator's reset); records no auth events.
    func deleteAllUsers() throws

    /// The auth feed after `position`, at most `limit` events (docs/functions.md). `insert` records
    /// `created`, `delete` `deleted`, and `modify` `disabled` or `enabled` when it changes that, each in
    /// the transaction of its change.
    func authEvents(after position: Int64, limit: Int) throws -> AuthEventPage

    /// The account with this phone number (E.164).
    func user(phoneNumber: String) throws -> UserRecord?
    /// The account a provider's user (`google.com`, its uid there) is linked to.
    func user(providerId: String, rawId: String) throws -> UserRecord?

    func insertRefreshToken(_ token: RefreshTokenRecord) throws
    func refreshToken(hash: [UInt8]) throws -> RefreshTokenRecord?
    /// Revokes every refresh token of `uid`.
    func revokeRefreshTokens(uid: String) throws
    /// Forgets revoked tokens issued before `issuedBefore` (seconds); presenting one then answers
    /// INVALID_REFRESH_TOKEN instead of TOKEN_EXPIRED, which signs the client out all the same.
    func pruneRevokedRefreshTokens(issuedBefore: Int64) throws

    func insertOobCode(_ code: OobCode) throws
    /// The code whose SHA-256 matches `code`'s.
    func oobCode(_ code: String) throws -> OobCode?
    func deleteOobCode(_ code: String) throws
    /// Every stored code, oldest first; `code` is empty for those the outbox may not show.
    func oobCodes() throws -> [OobCode]

    /// True when a read may wait for a network round trip (PostgreSQL): the service then never reads on
    /// the caller's thread where the server asks from its event loop (``AccountVerdicts``).
    var readsOverNetwork: Bool { get }

    /// Ends what the store runs beside its callers (a listening thread, a checkpointing thread) and
    /// closes its connections, waiting for them; no call may follow.
    func close()
}

extension AccountStore {
    public var readsOverNetwork: Bool { false }
}

/// The id, email, phone number or a linked provider's identity of a new or changed account is already used.
public struct AccountStoreConflict: Error, Sendable {
    public enum Field: Sendable, Equatable { case id, email, phoneNumber, provider }
    public var field: Field
    public init(_ field: Field = .email) { self.field = field }
}
