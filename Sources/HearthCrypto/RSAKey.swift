internal import COpenSSL
import Foundation

/// An RSA private key for RS256 (RSASSA-PKCS1-v1_5 with SHA-256), held as an OpenSSL `EVP_PKEY`.
///
/// The key is immutable after creation and OpenSSL's EVP_PKEY may be used for signing from several
/// threads at once (each call makes its own EVP_MD_CTX), hence `@unchecked Sendable`.
public final class RSAPrivateKey: @unchecked Sendable {
    fileprivate let pkey: OpaquePointer

    private init(pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    /// A fresh key of `bits` bits (2048 is what Google's securetoken keys use).
    public static func generate(bits: Int = 2048) throws -> RSAPrivateKey {
        guard let pkey = COpenSSL_rsa_generate(UInt32(bits)) else { throw CryptoError("RSA key generation") }
        return RSAPrivateKey(pkey: pkey)
    }

    /// Reads a PKCS#8 (or traditional) PEM private key.
    public init(pem: String) throws {
        let bytes = Array(pem.utf8)
        let loaded: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let loaded, EVP_PKEY_get_base_id(loaded) == EVP_PKEY_RSA else {
            if let loaded { EVP_PKEY_free(loaded) }
            throw CryptoError("reading an RSA private key from PEM")
        }
        pkey = loaded
    }

    /// The key as unencrypted PKCS#8 PEM (keep the file mode 0600).
    public func pemRepresentation() throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PKCS8PrivateKey(bio, pkey, nil, nil, 0, nil, nil) == 1 else { throw CryptoError("writing PEM") }
        return Self.contents(of: bio)
    }

    /// The public half.
    public var publicKey: RSAPublicKey {
        EVP_PKEY_up_ref(pkey)
        return RSAPublicKey(sharing: pkey)
    }

    /// The RS256 signature of `message`.
    public func signRS256(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pkey) == 1 else { throw CryptoError("RS256 sign init") }
        var length = 0
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1 else {
            throw CryptoError("RS256 sign length")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let ok = message.withUnsafeBufferPointer { input in
            signature.withUnsafeMutableBufferPointer { EVP_DigestSign(context, $0.baseAddress, &length, input.baseAddress, input.count) }
        }
        guard ok == 1 else { throw CryptoError("RS256 sign") }
        return Array(signature.prefix(length))
    }

    static func contents(of bio: OpaquePointer) -> String {
        var data: UnsafeMutablePointer<CChar>?
        let count = COpenSSL_bio_mem_data(bio, &data)
        guard let data, count > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
    }
}

/// An RSA public key: verifies RS256 and exposes the JWK parameters `n` and `e`.
///
/// Verification reuses initialised `EVP_PKEY_CTX`s from a small pool: OpenSSL 3's per-call setup
/// (`EVP_DigestVerifyInit` fetching the digest and padding implementations from its provider) cost
/// about as much as the RSA operation itself. A context is used by one thread at a time (taken from the
/// pool, returned after), which is all OpenSSL requires of it.
public final class RSAPublicKey: @unchecked Sendable {  // immutable EVP_PKEY; the pool is behind its lock
    fileprivate let pkey: OpaquePointer
    private let pool = ContextPool()

    fileprivate init(sharing pkey: OpaquePointer) { self.pkey = pkey }

    /// The key with modulus `n` and exponent `e` (big-endian, as a JWK's `n` and `e` decode), for
    /// verifying an identity provider's RS256 tokens. Refuses moduli under 2048 bits: a provider's
    /// keys are at least that, and a short one could be factored.
    public init(modulus: [UInt8], exponent: [UInt8]) throws {
        let significant = modulus.drop(while: { $0 == 0 })
        guard significant.count >= 256, significant.count <= 1024 else {
            throw CryptoError("an RSA public key of \(significant.count * 8) bits (2048 to 8192 are accepted)")
        }
        // An exponent of 1 would make any padded digest its own signature: odd, at least 3, at most 2^64.
        let e = exponent.drop(while: { $0 == 0 })
        guard !e.isEmpty, e.count <= 8, e.last! & 1 == 1, e.count > 1 || e.first! >= 3 else {
            throw CryptoError("an RSA public exponent that is not odd and at least 3")
        }
        guard let key = PublicKeyBuilder.build(
            type: "RSA", [.bignum(OSSL_PKEY_PARAM_RSA_N, Array(significant)), .bignum(OSSL_PKEY_PARAM_RSA_E, exponent)])
        else { throw CryptoError("building an RSA public key from n and e") }
        pkey = key
    }
    deinit {
        for context in pool.drain() { EVP_PKEY_CTX_free(context) }
        EVP_PKEY_free(pkey)
    }

    /// Reads a PEM `PUBLIC KEY` (SubjectPublicKeyInfo).
    public init(pem: String) throws {
        let bytes = Array(pem.utf8)
        let loaded: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        guard let loaded else { throw CryptoError("reading an RSA public key from PEM") }
        pkey = loaded
    }

    /// The key as a PEM `PUBLIC KEY`.
    public func pemRepresentation() throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, pkey) == 1 else { throw CryptoError("writing PEM") }
        return RSAPrivateKey.contents(of: bio)
    }

    /// Whether `signature` is a valid RS256 signature of `message`.
    public func verifyRS256(_ message: [UInt8], signature: [UInt8]) -> Bool {
        let digest = SHA256.hash(message)
        guard let context = pool.take() ?? newVerifyContext() else { return false }
        let valid = digest.withUnsafeBufferPointer { hash in
            signature.withUnsafeBufferPointer { sig in
                EVP_PKEY_verify(context, sig.baseAddress, sig.count, hash.baseAddress, hash.count) == 1
            }
        }
        pool.give(context)
        return valid
    }

    /// The textbook OpenSSL 3 route (a fresh `EVP_DigestVerifyInit` per call): the reference the
    /// `auth.verify` benchmark compares ``verifyRS256(_:signature:)`` with.
    public func verifyRS256OneShot(_ message: [UInt8], signature: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
        return message.withUnsafeBufferPointer { input in
            signature.withUnsafeBufferPointer { sig in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, input.baseAddress, input.count) == 1
            }
        }
    }

    /// A context ready for RSASSA-PKCS1-v1_5 verification of SHA-256 digests.
    private func newVerifyContext() -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new(pkey, nil) else { return nil }
        guard EVP_PKEY_verify_init(context) == 1, EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1,
            EVP_PKEY_CTX_set_signature_md(context, EVP_sha256()) == 1
        else {
            EVP_PKEY_CTX_free(context)
            return nil
        }
        return context
    }

    /// The modulus, big-endian without leading zeros (JWK `n` before base64url).
    public var modulus: [UInt8] { parameter(OSSL_PKEY_PARAM_RSA_N) }
    /// The public exponent, big-endian (JWK `e` before base64url).
    public var exponent: [UInt8] { parameter(OSSL_PKEY_PARAM_RSA_E) }

    private func parameter(_ name: String) -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &number) == 1, let number else { return [] }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
        let written = bytes.withUnsafeMutableBufferPointer { BN_bn2bin(number, $0.baseAddress) }
        return Array(bytes.prefix(Int(written)))
    }
}

/// Idle verification contexts (at most 16 are kept).
private final class ContextPool: @unchecked Sendable {  // `contexts` only under `lock`
    private let lock = NSLock()
    private var contexts: [OpaquePointer] = []

    func take() -> OpaquePointer? {
        lock.lock()
        defer { lock.unlock() }
        return contexts.popLast()
    }

    func give(_ context: OpaquePointer) {
        lock.lock()
        if contexts.count < 16 {
            contexts.append(context)
            lock.unlock()
        } else {
            lock.unlock()
            EVP_PKEY_CTX_free(context)
        }
    }

    func drain() -> [OpaquePointer] {
        lock.lock()
        defer { lock.unlock() }
        defer { contexts.removeAll() }
        return contexts
    }
}
