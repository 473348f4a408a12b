import HearthSupport
internal import COpenSSL

/// Firebase Auth's modified scrypt (docs/auth.md §7.2): the password hash is the project's signer key
/// encrypted with AES-256-CTR (zero IV) under the first 32 bytes of scrypt(password, salt ‖ separator,
/// N = 2^memCost, r = rounds, p = 1). Used to verify passwords of users imported from a Firebase export.
public struct FirebaseScrypt: Codable, Sendable, Equatable {
    public var signerKey: [UInt8]
    public var saltSeparator: [UInt8]
    /// scrypt's r (Firebase allows 1–8).
    public var rounds: Int
    /// log2 of scrypt's N (Firebase allows 1–14).
    public var memoryCost: Int

    public init(signerKey: [UInt8], saltSeparator: [UInt8], rounds: Int, memoryCost: Int) {
        self.signerKey = signerKey
        self.saltSeparator = saltSeparator
        self.rounds = rounds
        self.memoryCost = memoryCost
    }

    /// Whether the parameters are within the ranges Firebase's tools accept.
    public var isValid: Bool { (1...8).contains(rounds) && (1...14).contains(memoryCost) && !signerKey.isEmpty }

    /// The hash of `password` with the user's `salt`.
    public func hash(_ password: String, salt: [UInt8]) throws -> [UInt8] {
        guard isValid else { throw CryptoError("Firebase scrypt parameters out of range") }
        let key = try Self.scrypt(
            password: Array(password.utf8), salt: salt + saltSeparator, n: 1 << memoryCost, r: rounds, p: 1, length: 32)
        return try Self.aes256CTR(key: key, iv: [UInt8](repeating: 0, count: 16), data: signerKey)
    }

    /// Whether `password` hashes to `expected` (compared in constant time).
    public func verify(_ password: String, salt: [UInt8], expected: [UInt8]) -> Bool {
        guard let actual = try? hash(password, salt: salt) else { return false }
        return ConstantTime.equal(actual, expected)
    }

    /// Standard scrypt (RFC 7914) through OpenSSL's `EVP_PBE_scrypt`.
    public static func scrypt(password: [UInt8], salt: [UInt8], n: Int, r: Int, p: Int, length: Int) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        // 128·N·r·p bytes plus slack; OpenSSL refuses parameters that need more than maxmem.
        let maxMemory = UInt64(128 * n * r * p) + 1 << 20
        let passChars = password.map { CChar(bitPattern: $0) } + [0]  // never without a base address
        let ok = passChars.withUnsafeBufferPointer { pass in
            salt.withUnsafeBufferPointer { saltBytes in
                output.withUnsafeMutableBufferPointer { out in
                    EVP_PBE_scrypt(
                        pass.baseAddress, password.count, saltBytes.baseAddress, saltBytes.count,
                        UInt64(n), UInt64(r), UInt64(p), maxMemory, out.baseAddress, length)
                }
            }
        }
        guard ok == 1 else { throw CryptoError("scrypt") }
        return output
    }

    /// AES-256 in CTR mode (encryption and decryption are the same operation).
    public static func aes256CTR(key: [UInt8], iv: [UInt8], data: [UInt8]) throws -> [UInt8] {
        precondition(key.count == 32 && iv.count == 16, "AES-256-CTR needs a 32-byte key and a 16-byte IV")
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_EncryptInit_ex(context, EVP_aes_256_ctr(), nil, key, iv) == 1 else { throw CryptoError("AES-CTR init") }
        var output = [UInt8](repeating: 0, count: data.count + 16)
        var written: Int32 = 0
        let ok = data.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer {
                EVP_EncryptUpdate(context, $0.baseAddress, &written, input.baseAddress, Int32(input.count))
            }
        }
        guard ok == 1 else { throw CryptoError("AES-CTR") }
        return Array(output.prefix(Int(written)))
    }
}
