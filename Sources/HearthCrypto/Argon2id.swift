internal import CSodium

/// Password hashing with argon2id (libsodium `crypto_pwhash_str_alg`), producing the self-describing PHC
/// string (`$argon2id$v=19$m=…,t=…,p=1$salt$hash`), so parameters can change later without breaking old
/// hashes: `needsRehash` tells when a stored hash used other parameters.
public struct Argon2id: Sendable, Equatable {
    /// Passes over memory (libsodium's opslimit, ≥ 1).
    public var iterations: UInt64
    /// Memory in bytes (libsodium's memlimit).
    public var memoryBytes: Int

    public init(iterations: UInt64, memoryBytes: Int) {
        self.iterations = iterations
        self.memoryBytes = memoryBytes
    }

    /// Hearth's parameters, chosen by measurement on the 2-core build machine (docs/auth.md): 19 MiB and
    /// 2 passes (OWASP's argon2id minimum) cost ≈ 26 ms per hash there, so two cores verify ≈ 70 sign-ins/s,
    /// above the 50/s target and far beyond what a guessing attacker could use.
    public static let hearthDefault = Argon2id(iterations: 2, memoryBytes: 19 * 1024 * 1024)
    /// Cheap parameters for unit tests only.
    public static let testing = Argon2id(iterations: 1, memoryBytes: 64 * 1024)

    /// The PHC string for `password`, with a fresh random salt.
    public func hash(_ password: String) throws -> String {
        _ = Sodium.ready
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let chars = password.utf8CString  // NUL-terminated, so never without a base address
        let code = chars.withUnsafeBufferPointer { input in
            crypto_pwhash_str_alg(
                &out, input.baseAddress!, UInt64(input.count - 1), iterations, memoryBytes, crypto_pwhash_alg_argon2id13())
        }
        guard code == 0 else { throw CryptoError("argon2id hash (out of memory?)") }
        let length = out.firstIndex(of: 0) ?? out.count
        return String(decoding: out[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` matches the PHC string `stored` (any argon2 parameters it names).
    public static func verify(_ password: String, against stored: String) -> Bool {
        _ = Sodium.ready
        let chars = password.utf8CString
        return chars.withUnsafeBufferPointer { input in
            crypto_pwhash_str_verify(stored, input.baseAddress!, UInt64(input.count - 1)) == 0
        }
    }

    /// Whether `stored` was made with other parameters than these (and should be re-hashed at the next sign-in).
    public func needsRehash(_ stored: String) -> Bool {
        _ = Sodium.ready
        return crypto_pwhash_str_needs_rehash(stored, iterations, memoryBytes) != 0
    }
}
