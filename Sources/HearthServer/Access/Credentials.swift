import HearthCore
import HearthProtocol
import HearthWire
import HearthSupport

/// Why a credential was refused, whichever protocol showed it: REST answers 401 with the message,
/// realtime `invalid_token` or `expired_token` (``wireStatus``).
struct CredentialRefusal: Error, Equatable {
    var message: String
    /// A signature-valid token past its expiry (realtime `expired_token`).
    var expired = false
    /// A good token whose account no longer accepts it (REST says so instead of "could not parse").
    var revoked = false

    static let unparsable = CredentialRefusal(message: "Could not parse auth token.")
    static let unverifiable = CredentialRefusal(message: "Could not verify the auth token.")
    static let revokedToken = CredentialRefusal(
        message: "The auth token was revoked: its account was disabled or deleted, or its password changed. Sign in again.",
        revoked: true)

    var wireStatus: Wire.Status { expired ? .expiredToken : .invalidToken }
}

/// Who a credential makes its bearer (docs/protocol.md §2.3, §6.2): the emulator's `owner` and the admin
/// token are admins; ID tokens are verified by the ``IdentityService`` and good while their account
/// accepts them; in emulator mode unsigned tokens are taken at their word. Loop thread only.
final class Credentials {
    private let emulator: Bool
    private let adminToken: String?
    /// Verifies ID tokens and answers whether an account still accepts one; nil verifies none (emulator
    /// mode still reads unsigned tokens).
    let identity: (any IdentityService)?

    init(emulator: Bool, adminToken: String?, identity: (any IdentityService)?) {
        self.emulator = emulator
        self.adminToken = adminToken
        self.identity = identity
    }

    /// What `credential` makes its bearer. An admin credential with an auth variable acts as that user
    /// (`auth_variable_override`, or realtime `authvar`; JSON null: signed out).
    func caller(credential: String, authVariable: Node?) -> Result<Caller, CredentialRefusal> {
        let isOwner = emulator && credential == "owner"
        let isAdminToken = adminToken.map { ConstantTime.equal($0, credential) } ?? false
        if isOwner || isAdminToken {
            guard let authVariable else { return .success(.admin) }
            return .success(Caller(isAdmin: false, auth: authVariable.isEmpty ? nil : authVariable))
        }
        if let identity {
            switch identity.verifyIDToken(credential) {
            case .success(let verified):
                // The emulator's unsigned tokens never expire (their `iat` is usually 0) and speak for no
                // account; a signed token is good only while its account accepts it.
                let signed = !(credential.split(separator: ".", omittingEmptySubsequences: false).last?.isEmpty ?? true)
                guard !signed || identity.accountAllows(uid: verified.uid, issuedAt: verified.issuedAt) else {
                    return .failure(.revokedToken)
                }
                return .success(Caller(
                    isAdmin: false, auth: verified.auth, expiresAt: signed ? verified.expiresAt * 1000 : nil,
                    account: signed ? (verified.uid, verified.issuedAt) : nil))
            case .failure(.malformed):
                // A token whose claims no verifier reads (times out of range, not a JWT) is
                // refused in every mode: the emulator's leniency is about signatures and audiences.
                return .failure(.unparsable)
            case .failure(let refusal):
                if !emulator {
                    return .failure(refusal == .expired
                        ? CredentialRefusal(message: "Auth token is expired.", expired: true) : .unverifiable)
                }
            }
        }
        guard emulator else { return .failure(.unverifiable) }
        // Emulator mode: unsigned (or unverified) JWTs are accepted without signature or expiry checks.
        guard let claims = CompactJWT.claims(credential) else { return .failure(.unparsable) }
        return .success(Caller(isAdmin: false, auth: AuthVariable.from(claims: claims)))
    }

    /// Whether `credential` is not a user's ID token at all (firebase-admin for Node sends its own
    /// OAuth token where the emulator takes any credential for rules management).
    static func isNotAnIDToken(_ credential: String) -> Bool { CompactJWT.claims(credential) == nil }

    /// Whether the account behind `caller` still accepts its token; `verdicts` remembers each account's
    /// answer for one pass over many callers.
    func stillAccepted(_ caller: Caller, verdicts: inout [String: Bool]) -> Bool {
        guard let account = caller.account, let identity else { return true }
        let key = account.uid + "\u{0}" + String(account.issuedAt)
        if let known = verdicts[key] { return known }
        let allowed = identity.accountAllows(uid: account.uid, issuedAt: account.issuedAt)
        verdicts[key] = allowed
        return allowed
    }
}
