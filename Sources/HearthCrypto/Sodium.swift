internal import CSodium

/// libsodium must be initialised once before use; `sodium_init` is idempotent and thread-safe, and a
/// failure (no entropy source) makes every later call unsafe, so it stops the process.
enum Sodium {
    static let ready: Bool = {
        guard sodium_init() >= 0 else { preconditionFailure("libsodium could not initialise (no entropy source?)") }
        return true
    }()
}

/// Bytes from the operating system's CSPRNG (libsodium's `randombytes_buf`).
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        _ = Sodium.ready
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        return bytes
    }

    /// `count` characters drawn uniformly from `alphabet` (rejection-free: libsodium's uniform sampler).
    public static func string(_ count: Int, alphabet: [Character]) -> String {
        _ = Sodium.ready
        var result = ""
        result.reserveCapacity(count)
        for _ in 0..<count { result.append(alphabet[Int(randombytes_uniform(UInt32(alphabet.count)))]) }
        return result
    }
}

/// SHA-256 (libsodium's `crypto_hash_sha256`).
public enum SHA256 {
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        _ = Sodium.ready
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                _ = crypto_hash_sha256(out.baseAddress!, input.baseAddress ?? UnsafePointer(out.baseAddress!), UInt64(input.count))
            }
        }
        return digest
    }

    public static func hash(_ text: String) -> [UInt8] { hash(Array(text.utf8)) }
}

/// HMAC-SHA256 with a key of any length (libsodium's `crypto_auth_hmacsha256_init`, RFC 2104): what
/// signs webhook deliveries (docs/functions.md).
public enum HMACSHA256 {
    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        _ = Sodium.ready
        var state = crypto_auth_hmacsha256_state()
        var digest = [UInt8](repeating: 0, count: 32)
        // An empty key still needs a pointer: one byte's worth, of which none is read.
        (key.isEmpty ? [0] : key).withUnsafeBufferPointer { buffer in
            _ = crypto_auth_hmacsha256_init(&state, buffer.baseAddress!, key.count)
        }
        message.withUnsafeBufferPointer { message in
            if let base = message.baseAddress { _ = crypto_auth_hmacsha256_update(&state, base, UInt64(message.count)) }
        }
        digest.withUnsafeMutableBufferPointer { out in _ = crypto_auth_hmacsha256_final(&state, out.baseAddress!) }
        return digest
    }
}
