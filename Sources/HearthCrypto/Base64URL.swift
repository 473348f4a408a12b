import HearthCore
/// Base64 in the URL-safe alphabet without padding (JWT segments, JWK numbers, refresh tokens), plus a
/// decoder that accepts either alphabet, padded or not (Firebase exports use standard base64,
/// firebase-admin sends URL-safe). Hand-written over bytes: ID-token verification decodes two segments
/// per token, and Foundation's string-based route cost more than the RSA check itself.
public enum Base64URL {
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: urlAlphabet, pad: false) }

    /// Standard base64 with padding (what Firebase's `auth:export` writes).
    public static func encodeStandard(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: standardAlphabet, pad: true) }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int((chunk >> UInt32(shift)) & 63)]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            var chunk = UInt32(bytes[index]) << 16
            if rest == 2 { chunk |= UInt32(bytes[index + 1]) << 8 }
            output.append(alphabet[Int((chunk >> 18) & 63)])
            output.append(alphabet[Int((chunk >> 12) & 63)])
            if rest == 2 { output.append(alphabet[Int((chunk >> 6) & 63)]) }
            if pad { output.append(contentsOf: Array(repeating: UInt8(ascii: "="), count: 3 - rest)) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(bytes: $0) }
    }

    public static func decode(_ text: Substring) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(bytes: $0) }
    }

    /// Decodes UTF-8 base64 text in either alphabet; trailing `=` padding is optional. Nil when malformed.
    /// (HearthCore's decoder, which the database uses for the same texts.)
    public static func decode(bytes input: UnsafeBufferPointer<UInt8>) -> [UInt8]? { Base64.decode(buffer: input) }
}
