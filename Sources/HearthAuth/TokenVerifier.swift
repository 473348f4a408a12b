import Foundation
public import HearthCore
import HearthCrypto
import HearthProtocol
import Synchronization

/// What a verified ID token says: the uid, the sign-in provider and every claim, ready to become the
/// security rules' `auth` variable.
public struct AuthContext: Sendable {
    /// `sub`.
    public let uid: String
    /// `firebase.sign_in_provider`: `password`, `anonymous`, `custom`, …
    public let provider: String
    /// Seconds.
    public let issuedAt: Int64
    /// Seconds; for unsigned emulator tokens this is whatever the token says (never enforced).
    public let expiresAt: Int64
    /// `auth_time` in seconds, when the token has one.
    public let authTime: Int64?
    /// The decoded payload: `auth.token` in rules.
    public let claims: Node

    /// The rules' `auth` value: `{"uid": …, "provider": …, "token": {claims}}` (docs/auth.md §5.1).
    public var auth: Node { AuthVariable.make(uid: uid, provider: provider, token: claims) }
}

/// Why a token was refused. `realtimeStatus` is the status the realtime protocol answers (`auth` reply or
/// `ac` push): `expired_token` for expiry, `invalid_token` for everything else.
public struct TokenVerificationError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case malformed, unsupportedAlgorithm, unknownKey, badSignature, wrongAudience, wrongIssuer, missingSubject,
            expired, issuedInFuture
    }
    public let reason: Reason
    public init(reason: Reason) { self.reason = reason }
    public var realtimeStatus: String { reason == .expired ? "expired_token" : "invalid_token" }
    public var description: String { "ID token refused: \(reason.rawValue)" }
}

/// Verifies Hearth's ID tokens offline: RS256 signature with the project's key, `aud`, `iss`, `sub`,
/// `exp` and `iat` (60 s clock skew allowed). It does not consult the account store: revocation
/// (`validSince`) and disabled accounts are checked by ``AuthService/authenticate(idToken:)``.
///
/// In emulator mode it also accepts the unsigned (`alg: none`) tokens of Firebase's Auth emulator and of
/// the JS SDK's `mockUserToken`, without checking their expiry (their default `iat` is 0), as Firebase's
/// emulators do.
///
/// Signature checks are cached: the database verifies the same token on every request, so the verdict
/// for a token string is kept (``VerifiedTokens``: up to `cacheCapacity` tokens, the newest four of each
/// account) and only the expiry is re-checked.
///
/// Thread-safe; typical use from the database:
///
///     let context = try verifier.verify(token)     // throws TokenVerificationError
///     rulesAuth = context.auth                      // {uid, provider, token}
public final class TokenVerifier: Sendable {
    public let projectID: String
    public let acceptsUnsignedTokens: Bool
    private let publicKey: RSAPublicKey
    /// The exact first segment Hearth signs with; any other RS256 header is refused.
    private let signedHeader: String
    private let issuer: String
    private let clock: @Sendable () -> Int64
    private let cache: Mutex<VerifiedTokens>
    private let cacheCapacity: Int
    static let clockSkewSeconds: Int64 = 60

    /// - Parameter clock: seconds since 1970.
    public init(
        projectID: String, key: SigningKey, acceptsUnsignedTokens: Bool, cacheCapacity: Int = 10_000,
        clock: @escaping @Sendable () -> Int64 = AuthClock.seconds
    ) {
        self.projectID = projectID
        self.acceptsUnsignedTokens = acceptsUnsignedTokens
        publicKey = key.publicKey
        signedHeader = JWT.header(keyID: key.keyID)
        issuer = "https://securetoken.google.com/" + projectID
        self.clock = clock
        self.cacheCapacity = cacheCapacity
        cache = Mutex(VerifiedTokens(capacity: cacheCapacity))
    }

    public func verify(_ token: String) throws(TokenVerificationError) -> AuthContext {
        let now = clock()
        if cacheCapacity > 0, let cached = cache.withLock({ $0[token] }) {
            try checkTimes(cached, now: now, signed: true)
            return cached
        }
        let context = try verifyUncached(token, now: now)
        // Only signed tokens are cached: the cached path re-checks expiry, which unsigned emulator tokens skip.
        if cacheCapacity > 0 && token.utf8.last != UInt8(ascii: ".") {
            cache.withLock { $0.insert(context, for: token) }
        }
        return context
    }

    /// The full check, bypassing the cache (benchmarks; tests).
    public func verifyUncached(_ token: String, now: Int64) throws(TokenVerificationError) -> AuthContext {
        var token = token
        let result = token.withUTF8 { bytes in
            Result { () throws(TokenVerificationError) -> AuthContext in try verify(bytes: bytes, now: now) }
        }
        return try result.get()
    }

    private func verify(bytes: UnsafeBufferPointer<UInt8>, now: Int64) throws(TokenVerificationError) -> AuthContext {
        guard let firstDot = bytes.firstIndex(of: UInt8(ascii: ".")),
            let secondDot = bytes[(firstDot + 1)...].firstIndex(of: UInt8(ascii: ".")),
            !bytes[(secondDot + 1)...].contains(UInt8(ascii: "."))
        else { throw TokenVerificationError(reason: .malformed) }
        let header = UnsafeBufferPointer(rebasing: bytes[..<firstDot])
        let payloadText = UnsafeBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot])
        let signatureText = UnsafeBufferPointer(rebasing: bytes[(secondDot + 1)...])
        let signed: Bool
        if header.elementsEqual(signedHeader.utf8) {
            guard let signature = Base64URL.decode(bytes: signatureText) else { throw TokenVerificationError(reason: .malformed) }
            let message = Array(UnsafeBufferPointer(rebasing: bytes[..<secondDot]))
            guard publicKey.verifyRS256(message, signature: signature) else {
                throw TokenVerificationError(reason: .badSignature)
            }
            signed = true
        } else {
            guard let headerBytes = Base64URL.decode(bytes: header), let fields = JSONText.object(headerBytes) else {
                throw TokenVerificationError(reason: .malformed)
            }
            let algorithm = fields["alg"] as? String
            if algorithm == "none" && acceptsUnsignedTokens && signatureText.isEmpty {
                signed = false
            } else if algorithm == "RS256" {
                throw TokenVerificationError(reason: .unknownKey)
            } else {
                throw TokenVerificationError(reason: .unsupportedAlgorithm)
            }
        }
        guard let payload = Base64URL.decode(bytes: payloadText), let claims = try? Node(jsonBytes: payload),
            claims.hasChildren
        else {
            throw TokenVerificationError(reason: .malformed)
        }
        guard claims.child("aud").stringValue == projectID else { throw TokenVerificationError(reason: .wrongAudience) }
        guard claims.child("iss").stringValue == issuer else { throw TokenVerificationError(reason: .wrongIssuer) }
        guard let uid = claims.child("sub").stringValue, !uid.isEmpty, uid.utf8.count <= 128 else {
            throw TokenVerificationError(reason: .missingSubject)
        }
        let context = AuthContext(
            uid: uid,
            provider: claims.child("firebase").child("sign_in_provider").stringValue ?? (signed ? "password" : "custom"),
            issuedAt: try Self.seconds(claims.child("iat")) ?? 0,
            expiresAt: try Self.seconds(claims.child("exp")) ?? 0,
            authTime: try Self.seconds(claims.child("auth_time")),
            claims: claims)
        try checkTimes(context, now: now, signed: signed)
        return context
    }

    /// Largest NumericDate accepted: 2^53 s, the last integer every JSON reader keeps exactly, and far
    /// enough from Int64's limits that adding clock skew or converting to milliseconds cannot overflow.
    static let maxSeconds: Int64 = 1 << 53

    /// A NumericDate claim as whole seconds; nil when absent. Anything else (a string, a fraction, 1e300:
    /// unsigned emulator tokens carry whatever the client wrote) is malformed rather than a trapping
    /// conversion.
    static func seconds(_ claim: Node) throws(TokenVerificationError) -> Int64? {
        if claim.isEmpty { return nil }
        guard let number = claim.numberValue, let seconds = Int64(exactly: number),
            (-maxSeconds...maxSeconds).contains(seconds)
        else {
            throw TokenVerificationError(reason: .malformed)
        }
        return seconds
    }

    private func checkTimes(_ context: AuthContext, now: Int64, signed: Bool) throws(TokenVerificationError) {
        guard signed else { return }  // emulator tokens: never expire (see the type's comment)
        if context.expiresAt + Self.clockSkewSeconds <= now { throw TokenVerificationError(reason: .expired) }
        if context.issuedAt > now + Self.clockSkewSeconds { throw TokenVerificationError(reason: .issuedInFuture) }
    }
}

/// The wall clock.
public enum AuthClock {
    @Sendable public static func seconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
    @Sendable public static func milliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

/// Compact JWS encoding.
enum JWT {
    static func header(keyID: String) -> String {
        Base64URL.encode(Array("{\"alg\":\"RS256\",\"kid\":\"\(keyID)\",\"typ\":\"JWT\"}".utf8))
    }

    static func sign(payload: [String: Any], key: SigningKey) throws -> String {
        let signingInput = header(keyID: key.keyID) + "." + Base64URL.encode(JSONText.bytes(payload))
        return signingInput + "." + Base64URL.encode(try key.privateKey.signRS256(Array(signingInput.utf8)))
    }

    /// The payload of any compact JWT, unverified (custom tokens from firebase-admin in emulator mode).
    static func unverifiedPayload(_ token: String) -> [String: Any]? { CompactJWT.segment(token, 1).flatMap(JSONText.object) }

    static func unverifiedHeader(_ token: String) -> [String: Any]? { CompactJWT.segment(token, 0).flatMap(JSONText.object) }
}
