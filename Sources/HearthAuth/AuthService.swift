import Foundation
public import HearthCrypto
public import HearthOutbound
public import HearthProtocol
public import HearthSupport
import Synchronization

/// What the auth service serves and how strictly.
public struct AuthConfiguration: Sendable {
    public var projectID: String
    /// Emulator mode: `Bearer owner` is admin, unsigned (`alg: none`) ID and custom tokens are accepted,
    /// the out-of-band code list is open, and per-IP limits are off (as in Firebase's emulator).
    public var emulator: Bool
    /// The admin bearer token of non-emulator mode (`<data>/admin-token`).
    public var adminToken: String?
    public var passwordHasher: Argon2id = .hearthDefault
    /// Email-enumeration protection (docs/auth.md §8.1): on by default, like new Firebase projects.
    public var emailEnumerationProtection = true
    public var allowAnonymousSignUp = true
    /// Where the settings an admin changes at runtime are kept (``AuthSettingName``: sign-in methods,
    /// identity providers): files in the data directory, or PostgreSQL for a cluster; without one they
    /// are kept in memory.
    public var settingsStorage: (any AuthSettingsStorage)?
    /// Per client IP, sign-up and sign-in attempts together (only when the transport reports the address).
    public var attemptsPerIP = RateLimiter.Rule(capacity: 100, perSecond: 5)
    /// New accounts per client IP: Firebase's documented 100 per hour.
    public var signUpsPerIP = RateLimiter.Rule(capacity: 100, perSecond: 100.0 / 3600)
    /// Failed sign-ins per account: 10 at once, then one more every 30 s (a successful reset clears it).
    public var failedSignInsPerAccount = RateLimiter.Rule(capacity: 10, perSecond: 1.0 / 30)
    /// Password-reset and verification emails per address.
    public var emailsPerAddress = RateLimiter.Rule(capacity: 10, perSecond: 1.0 / 60)
    /// The reverse proxies in front (`--trusted-proxies`): from them, the client address (what rate limits
    /// count) is the last `X-Forwarded-For` entry, the one the proxy appended, instead of the peer
    /// address, which is the proxy's. From anyone else the header is ignored (clients would choose their
    /// address).
    public var trustedProxies = TrustedProxies()
    /// Base of action links (`https://auth.example.com`); by default taken from the request's Host.
    public var publicURL: String?
    /// Hosts an action code's `continueUrl` (and `createAuthUri`'s `continueUri`) may name: Firebase's
    /// "authorized domains". An email sign-in link sends its code to that URL, so an open list would let
    /// anyone collect codes for any address. The host of `publicURL` is always authorized too. Exact host
    /// match, case-insensitive, any port.
    public var authorizedDomains: [String] = ["localhost", "127.0.0.1"]
    /// Milliseconds a PASSWORD_RESET, EMAIL_SIGNIN or VERIFY_AND_CHANGE_EMAIL code stays valid.
    public var passwordResetLifetime: Int64 = 3_600_000
    public var verifyEmailLifetime: Int64 = 72 * 3_600_000
    /// How the server asks identity providers (keys, user APIs): libcurl, bounded by ServerLimits'
    /// provider limits. Tests may put another here.
    public var fetcher: any HTTPFetching = HTTPFetcher(
        limits: OutboundLimits(
            connectSeconds: ServerLimits.providerFetchConnectSeconds, totalSeconds: ServerLimits.providerFetchTotalSeconds,
            responseBytesMax: ServerLimits.providerResponseBytesMax))
    /// Where the built-in providers' keys and APIs are (the real ones unless an admin says otherwise).
    public var providerEndpoints = ProviderEndpoints()
    /// Where blocking auth hooks may post besides public addresses (`--hooks-allow`, as webhooks).
    public var hookAddresses = OutboundAddresses()
    /// Where the service reports what its operator should see (a blocking hook that failed).
    public var log: Log = .silent
    /// Delivers verification and reset emails (SMTP in `hearth serve`); called on a background queue.
    /// Without it, codes only reach the outbox (`/emulator/v1/projects/{p}/oobCodes`).
    public var deliverEmail: (@Sendable (OutgoingEmail) -> Void)?

    public init(projectID: String, emulator: Bool, adminToken: String?) {
        self.projectID = projectID
        self.emulator = emulator
        self.adminToken = adminToken
    }
}

/// An email the auth service wants sent: a verification or password-reset link.
public struct OutgoingEmail: Sendable, Equatable {
    public var to: String
    public var subject: String
    public var body: String
    /// `VERIFY_EMAIL` or `PASSWORD_RESET`.
    public var requestType: String
}

/// Firebase Auth's REST API over an ``AccountStore`` (docs/auth.md §2): accounts, passwords, ID and
/// refresh tokens, out-of-band codes and the admin endpoints firebase-admin calls.
///
/// `handle(_:)` is synchronous and may take tens of milliseconds (argon2id), so callers run it off their
/// event loop; it is thread-safe. The database calls ``authenticate(idToken:)`` (checks revocation and
/// disabled accounts in the store) or, for the hot path, ``verifier`` (offline signature check).
public final class AuthService: Sendable {
    public let configuration: AuthConfiguration
    public let store: any AccountStore
    /// For a store on the network: what the server's loop reads instead of the store.
    private let verdicts: AccountVerdicts?
    public let key: SigningKey
    /// Offline ID-token verification for the database.
    public let verifier: TokenVerifier
    /// Milliseconds since 1970.
    let clock: @Sendable () -> Int64
    let attemptsPerIP: RateLimiter
    let signUpsPerIP: RateLimiter
    let failedSignIns: RateLimiter
    let emailsPerAddress: RateLimiter
    /// Bounds concurrent argon2id computations (each takes its memory parameter: 19 MiB by default).
    let hashingSlots: DispatchSemaphore
    /// A hash checked for unknown emails so that their sign-in takes as long as a real one.
    let dummyHash: String
    let enumerationProtection: Mutex<Bool>
    /// Which sign-ins are allowed; changed by an admin at runtime.
    let signInMethodsSetting: SharedSetting<SignInMethods>
    /// The identity providers configured (``IdentityProviderConfigs``); changed by an admin at runtime.
    let identityProvidersSetting: SharedSetting<IdentityProviderConfigs>
    /// The blocking auth hooks (``BlockingHooks``); changed by an admin at runtime.
    let blockingHooksSetting: SharedSetting<BlockingHooks>
    /// How the blocking hooks have answered on this node.
    let blockingStatus = BlockingHookStatus()
    /// Providers' published keys, and OpenID providers' discovery documents, by URL.
    let providerKeys: ProviderDocuments<JSONWebKeySet>
    let providerDiscovery: ProviderDocuments<OIDCDiscovery>
    /// Provider tokens bound to a nonce that already signed in.
    let usedNonceTokens = UsedNonceTokens()
    /// Emails being handed to `configuration.deliverEmail`, off the caller's thread; ``close()`` waits for them.
    let deliveries = DispatchGroup()
    /// Seconds of the last pruning of old revoked refresh tokens (rotation leaves one row per refresh).
    let lastPrune = Mutex<Int64>(0)
    /// How long revoked refresh tokens are kept, so that reuse answers TOKEN_EXPIRED: a week.
    static let revokedTokenRetention: Int64 = 7 * 86_400

    public init(
        configuration: AuthConfiguration, store: any AccountStore, key: SigningKey,
        clock: @escaping @Sendable () -> Int64 = AuthClock.milliseconds
    ) throws {
        self.configuration = configuration
        self.store = store
        verdicts = store.readsOverNetwork ? AccountVerdicts(store: store) : nil
        self.key = key
        self.clock = clock
        verifier = TokenVerifier(
            projectID: configuration.projectID, key: key, acceptsUnsignedTokens: configuration.emulator,
            clock: { clock() / 1000 })
        attemptsPerIP = RateLimiter(configuration.attemptsPerIP)
        signUpsPerIP = RateLimiter(configuration.signUpsPerIP)
        failedSignIns = RateLimiter(configuration.failedSignInsPerAccount)
        emailsPerAddress = RateLimiter(configuration.emailsPerAddress)
        hashingSlots = DispatchSemaphore(value: max(1, ProcessInfo.processInfo.activeProcessorCount))
        dummyHash = try configuration.passwordHasher.hash(Base64URL.encode(SecureRandom.bytes(16)))
        enumerationProtection = Mutex(configuration.emailEnumerationProtection)
        signInMethodsSetting = try SharedSetting(
            .signInMethods, storage: configuration.settingsStorage, fallback: SignInMethods(anonymous: configuration.allowAnonymousSignUp),
            decode: SignInMethods.init(storedJSON:), encode: \.storedJSON)
        identityProvidersSetting = try SharedSetting(
            .identityProviders, storage: configuration.settingsStorage, fallback: IdentityProviderConfigs(),
            decode: IdentityProviderConfigs.init(storedJSON:), encode: \.storedJSON)
        blockingHooksSetting = try SharedSetting(
            .blockingHooks, storage: configuration.settingsStorage, fallback: BlockingHooks(),
            decode: BlockingHooks.init(storedJSON:), encode: \.storedJSON)
        // On the service's clock, so tests can move time past a cache's lifetime.
        let seconds: @Sendable () -> Double = { Double(clock()) / 1000 }
        providerKeys = ProviderDocuments(fetcher: configuration.fetcher, clock: seconds) { bytes in try JSONWebKeySet(json: bytes) }
        providerDiscovery = ProviderDocuments(fetcher: configuration.fetcher, clock: seconds) { bytes in try OIDCDiscovery(json: bytes) }
    }

    /// How long ``close()`` waits for emails still being sent.
    static let deliveriesWaitSeconds = 30

    /// Waits for the work the service started off its callers' threads (emails being sent, account
    /// reads for the server), then closes the store and whatever it runs: call once nothing calls the
    /// service any more, before the process exits (a thread in libcrypto or libpq while the process's
    /// exit handlers tear those libraries down crashes it).
    public func close(log: Log = .silent) {
        if deliveries.wait(timeout: .now() + .seconds(Self.deliveriesWaitSeconds)) == .timedOut {
            // A mail server that takes this long is not waited for any more.
            log("hearth: an email was still being sent \(Self.deliveriesWaitSeconds) s after the server began to stop; it may not arrive.")
        }
        verdicts?.finishReads()
        store.close()
    }

    var now: Int64 { clock() }
    var nowSeconds: Int64 { clock() / 1000 }
    var protectsEmails: Bool { enumerationProtection.withLock { $0 } }

    // MARK: Verification for other modules

    /// Verifies an ID token and checks the account: it must exist (USER_NOT_FOUND), be enabled
    /// (USER_DISABLED) and the token must not predate the account's `validSince` (TOKEN_EXPIRED).
    public func authenticate(idToken: String) throws(AuthError) -> AuthContext {
        try authenticateUser(idToken: idToken).context
    }

    /// Whether a token issued at `issuedAt` (seconds) to `uid` is still good for its account: the account
    /// exists, is enabled, and the token does not predate its `validSince` (a password change or a
    /// revocation). The database asks this of every signed ID token it is shown, and again once a second
    /// of every connection holding one, so a disabled or deleted user loses access at once, not when the
    /// token expires. False when the store cannot be read (refusing is the safe answer).
    public func accountAllows(uid: String, issuedAt: Int64) -> Bool {
        if let verdicts { return verdicts.allows(uid: uid, issuedAt: issuedAt) }
        guard let user = try? store.user(id: uid) else { return false }
        return !user.disabled && issuedAt >= user.validSince
    }

    func authenticateUser(idToken: String) throws(AuthError) -> (context: AuthContext, user: UserRecord) {
        let context: AuthContext
        do { context = try verifier.verify(idToken) } catch { throw AuthError.invalidIDToken }
        let found: UserRecord?
        do { found = try store.user(id: context.uid) } catch { throw AuthError.internalError }
        guard let user = found else { throw AuthError.userNotFound }
        if user.disabled { throw AuthError.userDisabled }
        if context.issuedAt < user.validSince { throw AuthError.tokenExpired }
        return (context, user)
    }

    // MARK: Passwords

    func hashPassword(_ password: String) throws -> PasswordCredential {
        hashingSlots.wait()
        defer { hashingSlots.signal() }
        return .argon2id(try configuration.passwordHasher.hash(password))
    }

    func verifyPassword(_ password: String, _ credential: PasswordCredential?) -> Bool {
        hashingSlots.wait()
        defer { hashingSlots.signal() }
        guard let credential else {
            _ = Argon2id.verify(password, against: dummyHash)
            return false
        }
        return credential.verify(password)
    }

    static func checkPasswordStrength(_ password: String) throws(AuthError) {
        if password.utf16.count < 6 { throw AuthError.weakPassword }
        if password.utf8.count > 4096 { throw AuthError.invalid("WEAK_PASSWORD", "Password should be at most 4096 bytes") }
    }

    // MARK: Validation

    /// Lower-cased when plausible: one `@`, a non-empty local part, a dotted or single-label domain with
    /// no empty labels, no whitespace or control characters, at most 254 bytes.
    static func canonicalEmail(_ raw: String) -> String? {
        let email = raw.lowercased()
        guard email.utf8.count <= 254, !email.isEmpty else { return nil }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        // Unicode properties only for non-ASCII text: their lookup is slow and almost every address is ASCII.
        let refused: (Unicode.Scalar) -> Bool = { $0.value < 0x21 || $0 == "\u{7F}" || ($0.value > 0x7F && $0.properties.isWhitespace) }
        guard !email.unicodeScalars.contains(where: refused) else { return nil }
        guard !parts[1].split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else { return nil }
        return email
    }

    static let reservedClaims: Set<String> = [
        "iss", "aud", "sub", "iat", "exp", "nbf", "jti", "nonce", "azp", "acr", "amr", "cnf", "auth_time", "firebase",
        "at_hash", "c_hash",
    ]

    /// Checks a `customAttributes` string: ≤ 1000 characters, a JSON object, no reserved claim names.
    static func validateCustomAttributes(_ text: String) throws(AuthError) {
        if text.count > 1000 { throw AuthError.invalid("CLAIMS_TOO_LARGE") }
        guard let object = JSONText.object(Array(text.utf8)) else { throw AuthError.invalid("INVALID_CLAIMS") }
        if let reserved = object.keys.sorted().first(where: reservedClaims.contains) {
            throw AuthError.invalid("FORBIDDEN_CLAIM", reserved)
        }
    }

    static func newLocalID() -> String {
        SecureRandom.string(28, alphabet: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"))
    }

    // MARK: Tokens

    /// A signed ID token and a new refresh token for `user`'s session.
    func issueTokens(
        for user: UserRecord, provider: String, authTime: Int64? = nil, extraClaims: String? = nil
    ) throws -> [String: Any] {
        let issuedAt = nowSeconds
        let sessionStart = authTime ?? issuedAt
        let idToken = try signIDToken(for: user, provider: provider, authTime: sessionStart, extraClaims: extraClaims,
                                      issuedAt: issuedAt)
        let refreshToken = Base64URL.encode(SecureRandom.bytes(48))
        try store.insertRefreshToken(RefreshTokenRecord(
            tokenHash: SHA256.hash(refreshToken), uid: user.localId, provider: provider, authTime: sessionStart,
            extraClaims: extraClaims, issuedAt: issuedAt, revoked: false))
        return ["idToken": idToken, "refreshToken": refreshToken, "expiresIn": "3600"]
    }

    /// The ID token claims of docs/auth.md §4.1, signed RS256.
    func signIDToken(
        for user: UserRecord, provider: String, authTime: Int64, extraClaims: String?, issuedAt: Int64
    ) throws -> String {
        var claims: [String: Any] = [:]
        for text in [user.customAttributes, extraClaims] {
            guard let text, let object = JSONText.object(Array(text.utf8)) else { continue }
            for (name, value) in object where !Self.reservedClaims.contains(name) { claims[name] = value }
        }
        claims["iss"] = "https://securetoken.google.com/" + configuration.projectID
        claims["aud"] = configuration.projectID
        claims["auth_time"] = authTime
        claims["user_id"] = user.localId
        claims["sub"] = user.localId
        claims["iat"] = issuedAt
        claims["exp"] = issuedAt + 3600
        // Every identity the account can be found by, as Firebase lists them: `email`, `phone`, and each
        // linked provider's user id under the provider's name.
        var identities: [String: [String]] = [:]
        if let email = user.email {
            claims["email"] = email
            claims["email_verified"] = user.emailVerified
            identities["email"] = [email]
        }
        if let phone = user.phoneNumber {
            claims["phone_number"] = phone
            identities["phone"] = [phone]
        }
        for linked in user.linkedProviders ?? [] { identities[linked.providerId, default: []].append(linked.rawId) }
        if let name = user.displayName { claims["name"] = name }
        if let picture = user.photoUrl { claims["picture"] = picture }
        if provider == "anonymous" { claims["provider_id"] = "anonymous" }
        claims["firebase"] = ["identities": identities, "sign_in_provider": provider]
        return try JWT.sign(payload: claims, key: key)
    }

    /// A custom token for `uid` signed with Hearth's key, accepted by `signInWithCustomToken` in every
    /// mode (firebase-admin's own custom tokens are accepted only in emulator mode, where they are unsigned).
    public func createCustomToken(uid: String, claims: [String: String] = [:]) throws -> String {
        let issuedAt = nowSeconds
        var payload: [String: Any] = [
            "iss": "hearth", "sub": "hearth", "aud": Self.customTokenAudience, "uid": uid,
            "iat": issuedAt, "exp": issuedAt + 3600,
        ]
        if !claims.isEmpty { payload["claims"] = claims }
        return try JWT.sign(payload: payload, key: key)
    }

    static let customTokenAudience =
        "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
}

/// The database server's view of Firebase Auth (HearthProtocol's ``IdentityService``).
extension AuthService: IdentityService {
    public func verifyIDToken(_ token: String) -> Result<VerifiedIdentity, IdentityRefusal> {
        do {
            let context = try verifier.verify(token)
            return .success(VerifiedIdentity(uid: context.uid, issuedAt: context.issuedAt, expiresAt: context.expiresAt, auth: context.auth))
        } catch {
            switch error.reason {
            case .malformed: return .failure(.malformed)
            case .expired: return .failure(.expired)
            default: return .failure(.invalid)
            }
        }
    }

    public func handles(path: String) -> Bool { Self.handles(path: path) }
}
