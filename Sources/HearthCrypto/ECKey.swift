internal import COpenSSL
import Foundation

/// A P-256 public key: verifies ES256 (ECDSA with SHA-256), as identity providers sign with it.
///
/// A JWS carries the signature as `r || s`, 32 bytes each; OpenSSL wants DER, so the signature is
/// re-encoded before verifying. Immutable after creation, hence `@unchecked Sendable`.
public final class ECPublicKey: @unchecked Sendable {
    fileprivate let pkey: OpaquePointer

    fileprivate init(owning pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    /// The point (`x`, `y`), 32 bytes each, as a JWK with `crv: P-256` gives them. Throws for anything
    /// that is not a point on the curve.
    public init(x: [UInt8], y: [UInt8]) throws {
        guard x.count == 32, y.count == 32 else { throw CryptoError("a P-256 point needs 32-byte coordinates") }
        let point = [0x04] + x + y  // uncompressed SEC 1 encoding
        guard let key = PublicKeyBuilder.build(
            type: "EC", [.utf8(OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1"), .octets(OSSL_PKEY_PARAM_PUB_KEY, point)])
        else { throw CryptoError("building a P-256 key from x and y") }
        guard let check = EVP_PKEY_CTX_new(key, nil) else {
            EVP_PKEY_free(key)
            throw CryptoError("EVP_PKEY_CTX_new")
        }
        let onCurve = EVP_PKEY_public_check(check) == 1
        EVP_PKEY_CTX_free(check)
        guard onCurve else {
            EVP_PKEY_free(key)
            throw CryptoError("a P-256 key whose point is not on the curve")
        }
        pkey = key
    }

    /// Whether `signature` (`r || s`, 64 bytes) is a valid ES256 signature of `message`.
    public func verifyES256(_ message: [UInt8], signature: [UInt8]) -> Bool {
        guard let der = Self.der(fromRaw: signature), let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
        return message.withUnsafeBufferPointer { input in
            der.withUnsafeBufferPointer { EVP_DigestVerify(context, $0.baseAddress, $0.count, input.baseAddress, input.count) == 1 }
        }
    }

    /// The DER `ECDSA-Sig-Value` of a raw `r || s`; nil unless exactly 64 bytes.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {  // takes r and s on success
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }

    /// The raw `r || s` of a DER `ECDSA-Sig-Value`; nil if it does not parse.
    static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature) else { return nil }
        var raw = [UInt8](repeating: 0, count: 64)
        let ok = raw.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(r, buffer.baseAddress, 32) == 32 && BN_bn2binpad(s, buffer.baseAddress! + 32, 32) == 32
        }
        return ok ? raw : nil
    }
}

/// A P-256 private key that signs ES256: what tests and benchmarks use to stand in for a provider.
public final class ECPrivateKey: @unchecked Sendable {  // immutable EVP_PKEY
    private let pkey: OpaquePointer

    private init(pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    public static func generate() throws -> ECPrivateKey {
        guard let pkey = COpenSSL_ec_generate("P-256") else { throw CryptoError("P-256 key generation") }
        return ECPrivateKey(pkey: pkey)
    }

    /// The public point's coordinates, 32 bytes each (a JWK's `x` and `y`).
    public var coordinates: (x: [UInt8], y: [UInt8]) {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        let ok = point.withUnsafeMutableBufferPointer {
            EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, $0.baseAddress, $0.count, &length)
        }
        guard ok == 1, length == 65, point[0] == 0x04 else { return ([], []) }
        return (Array(point[1...32]), Array(point[33...64]))
    }

    public var publicKey: ECPublicKey {
        get throws { try ECPublicKey(x: coordinates.x, y: coordinates.y) }
    }

    /// The ES256 signature of `message`, as a JWS carries it (`r || s`).
    public func signES256(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pkey) == 1 else { throw CryptoError("ES256 sign init") }
        var length = 0
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1 else {
            throw CryptoError("ES256 sign length")
        }
        var der = [UInt8](repeating: 0, count: length)
        let ok = message.withUnsafeBufferPointer { input in
            der.withUnsafeMutableBufferPointer { EVP_DigestSign(context, $0.baseAddress, &length, input.baseAddress, input.count) }
        }
        guard ok == 1, let raw = ECPublicKey.raw(fromDER: Array(der.prefix(length))) else { throw CryptoError("ES256 sign") }
        return raw
    }
}
