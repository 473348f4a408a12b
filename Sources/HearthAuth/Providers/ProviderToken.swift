import Foundation
import HearthCrypto
import HearthProtocol

/// Why a provider's token was refused; `error` is Firebase's answer for it.
enum ProviderTokenRefusal: Error, Equatable, CustomStringConvertible {
    case tooLarge
    case malformed(String)
    case unsupportedAlgorithm(String)
    /// A header that would let the token pick its own key (`jku`, `x5u`, `jwk`, `x5c`) or demand
    /// extensions (`crit`).
    case forbiddenHeader(String)
    case unknownKey(String)
    case badSignature
    case wrongIssuer(String)
    case wrongAudience(String)
    case expired(Int64)
    case issuedInFuture(Int64)
    case missingSubject
    case nonceMissing
    case nonceMismatch
    case replayed

    var description: String {
        switch self {
        case .tooLarge: "the token is longer than \(ServerLimits.providerTokenBytesMax) bytes"
        case .malformed(let what): "the token is not a JWT: \(what)"
        case .unsupportedAlgorithm(let algorithm): "the token's algorithm \(algorithm) is not accepted (RS256 and ES256 are)"
        case .forbiddenHeader(let name): "the token's header has \"\(name)\", which is not accepted"
        case .unknownKey(let kid): "the token is signed with key \"\(kid)\", which the provider does not publish"
        case .badSignature: "the token's signature does not verify"
        case .wrongIssuer(let issuer): "the token's issuer \(issuer) is not this provider's"
        case .wrongAudience(let audience): "the token's audience \(audience) is not a client ID configured for this provider"
        case .expired(let at): "the token expired at \(at) (seconds since 1970)"
        case .issuedInFuture(let at): "the token is issued at \(at), in the future"
        case .missingSubject: "the token has no \"sub\""
        case .nonceMissing: "Nonce is missing in the request."
        case .nonceMismatch: "The nonce in the ID token does not match the SHA256 hash of the raw nonce in the request."
        case .replayed: "Duplicate credential received. Please try again with a new credential."
        }
    }

    /// `MISSING_OR_INVALID_NONCE` for nonce problems, else `INVALID_IDP_RESPONSE`.
    var error: AuthError {
        switch self {
        case .nonceMissing, .nonceMismatch, .replayed: AuthError.invalid("MISSING_OR_INVALID_NONCE", description)
        default: AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: \(description)")
        }
    }
}

/// A compact JWS as a provider issues it, split and decoded but not yet trusted.
struct ProviderJWT {
    let algorithm: String
    let keyID: String?
    /// `header.payload`, what the signature covers.
    let signingInput: [UInt8]
    let signature: [UInt8]
    let claims: [String: Any]

    static let forbiddenHeaders = ["jku", "x5u", "jwk", "x5c", "crit"]

    static func parse(_ token: String) throws(ProviderTokenRefusal) -> ProviderJWT {
        guard token.utf8.count <= ServerLimits.providerTokenBytesMax else { throw .tooLarge }
        // Split on bytes: splitting a String by Character walks grapheme clusters, which cost more than
        // the rest of the parse together (auth.idp's profile).
        let bytes = Array(token.utf8)
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else { throw .malformed("it has \(dots.count + 1) segments, not 3") }
        func decoded(_ range: Range<Int>) -> [UInt8]? {
            bytes.withUnsafeBufferPointer { Base64URL.decode(bytes: UnsafeBufferPointer(rebasing: $0[range])) }
        }
        guard let headerBytes = decoded(0..<dots[0]), let header = JSONText.object(headerBytes) else {
            throw .malformed("its header is not base64url JSON")
        }
        guard let payload = decoded(dots[0] + 1..<dots[1]), let claims = JSONText.object(payload) else {
            throw .malformed("its payload is not base64url JSON")
        }
        guard let signature = decoded(dots[1] + 1..<bytes.count) else { throw .malformed("its signature is not base64url") }
        for name in forbiddenHeaders where header[name] != nil { throw .forbiddenHeader(name) }
        guard let algorithm = Claims.string(header["alg"]) else { throw .malformed("its header has no \"alg\"") }
        guard algorithm == "RS256" || algorithm == "ES256" else { throw .unsupportedAlgorithm(algorithm) }
        let keyID = header["kid"].map { Claims.string($0) ?? "" }
        return ProviderJWT(
            algorithm: algorithm, keyID: keyID, signingInput: Array(bytes[..<dots[1]]),
            signature: signature, claims: claims)
    }
}

/// What a provider's verified ID token must say, and the check of it: a value, so it is tested without
/// keys or clocks.
struct ProviderTokenExpectations: Sendable, Equatable {
    /// Accepted `iss` values (Google has two).
    var issuers: [String]
    /// The configured client IDs; `aud` (a string, or an array of them) must name one.
    var audiences: [String]
    /// For Apple: the token's `nonce` must be the SHA-256 (lower-case hex) of the raw nonce the client
    /// sends, and the client must send one when the token has one.
    var requiresHashedNonce = false
    var clockSkewSeconds = Int64(ServerLimits.providerTokenClockSkewSeconds)

    /// Checks the claims of a token whose signature verified; `rawNonce` is what the client sent.
    func check(_ claims: [String: Any], rawNonce: String?, now: Int64) throws(ProviderTokenRefusal) {
        let issuer = Claims.string(claims["iss"]) ?? ""
        guard issuers.contains(issuer) else { throw .wrongIssuer(issuer.isEmpty ? "(none)" : issuer) }
        let audience: [String]
        if let single = Claims.string(claims["aud"]) {
            audience = [single]
        } else {
            audience = (claims["aud"] as? [Any] ?? []).compactMap(Claims.string)
        }
        guard audience.contains(where: audiences.contains) else {
            throw .wrongAudience(audience.isEmpty ? "(none)" : audience.joined(separator: ", "))
        }
        guard let expires = Claims.seconds(claims["exp"]) else { throw .malformed("it has no numeric \"exp\"") }
        guard expires + clockSkewSeconds > now else { throw .expired(expires) }
        if let issued = Claims.seconds(claims["iat"]), issued > now + clockSkewSeconds { throw .issuedInFuture(issued) }
        guard let subject = Claims.identifier(claims["sub"]), !subject.isEmpty, subject.utf8.count <= 256 else { throw .missingSubject }
        try checkNonce(Claims.string(claims["nonce"]), rawNonce: rawNonce)
    }

    private func checkNonce(_ tokenNonce: String?, rawNonce: String?) throws(ProviderTokenRefusal) {
        guard let rawNonce, !rawNonce.isEmpty else {
            if requiresHashedNonce && tokenNonce != nil { throw .nonceMissing }
            return
        }
        guard let tokenNonce else { throw .nonceMismatch }
        let hashed = Self.hex(SHA256.hash(rawNonce))
        // Apple puts the hash in the token; other OpenID providers put whatever the app sent them, which
        // Firebase's apps also hash first. Either is accepted for them, only the hash for Apple.
        if tokenNonce == hashed { return }
        if !requiresHashedNonce && tokenNonce == rawNonce { return }
        throw .nonceMismatch
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
