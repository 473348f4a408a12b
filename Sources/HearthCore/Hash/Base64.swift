/// Standard base64 (RFC 4648 §4: `A–Z a–z 0–9 + /`, `=` padding), the encoding the node hash uses
/// for its SHA-1 digest (rtdb-protocol.md §4.1, step 2).
///
/// HearthCore has no Foundation, so this is a small encoder of its own; decoding is not needed.
///
///     Base64.encode(Array("abc".utf8))   // "YWJj"
package enum Base64 {
    @usableFromInline
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Number of characters `byteCount` input bytes encode to, padding included.
    @inlinable
    package static func encodedCount(_ byteCount: Int) -> Int { (byteCount + 2) / 3 * 4 }

    /// Encodes `bytes` into `output`, which must hold `encodedCount(bytes.count)` bytes.
    package static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= encodedCount(bytes.count), "base64 output buffer too small")
        var out = 0
        var index = 0
        alphabet.withUnsafeBufferPointer { table in
            while index + 3 <= bytes.count {
                let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                output[out] = table[Int(group >> 18 & 63)]
                output[out + 1] = table[Int(group >> 12 & 63)]
                output[out + 2] = table[Int(group >> 6 & 63)]
                output[out + 3] = table[Int(group & 63)]
                index += 3
                out += 4
            }
            let remaining = bytes.count - index
            guard remaining > 0 else { return }
            let second = remaining == 2 ? UInt32(bytes[index + 1]) : 0
            let group = UInt32(bytes[index]) << 16 | second << 8
            output[out] = table[Int(group >> 18 & 63)]
            output[out + 1] = table[Int(group >> 12 & 63)]
            output[out + 2] = remaining == 2 ? table[Int(group >> 6 & 63)] : UInt8(ascii: "=")
            output[out + 3] = UInt8(ascii: "=")
        }
    }

    /// The base64 text of `bytes`.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        return input.withUnsafeBytes { raw in
            String(unsafeUninitializedCapacity: encodedCount(raw.count)) { buffer in
                encode(raw, into: UnsafeMutableRawBufferPointer(buffer))
                return encodedCount(raw.count)
            }
        }
    }
}
