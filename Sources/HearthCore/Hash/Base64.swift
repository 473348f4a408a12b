/// Standard base64 (RFC 4648 §4: `A–Z a–z 0–9 + /`, `=` padding), the encoding the node hash uses
/// for its SHA-1 digest (docs/protocol.md §4.1, step 2).
///
/// HearthCore has no Foundation, so this is a small codec of its own. The decoder reads what clients
/// send: either alphabet (standard, or URL-safe `-` `_`), padded with `=` or `.` (the long-poll
/// transport's web-safe padding) or not padded at all.
///
///     Base64.encode(Array("abc".utf8))   // "YWJj"
///     Base64.decode(Array("YWJj".utf8))  // [0x61, 0x62, 0x63]
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

    /// 0–63 for the characters of both alphabets, 0xFF for anything else.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// The bytes `text` encodes, in either alphabet, with or without `=`/`.` padding; nil when it is
    /// not base64 (a character outside both alphabets, more than two padding characters, or a length
    /// no encoding produces).
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        if let decoded = text.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return decoded }
        return Array(text).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// The same over bytes in place (an ID token's segments are decoded on every verification).
    package static func decode(buffer input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var end = input.count
        while end > 0 && (input[end - 1] == UInt8(ascii: "=") || input[end - 1] == UInt8(ascii: ".")) { end -= 1 }
        if input.count - end > 2 || end % 4 == 1 { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(end / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        for index in 0..<end {
            let value = values[Int(input[index])]
            if value == 0xFF { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }
}
