import HearthCore

/// Reads the JSON scalars the wire format is made of (keys, `"a"`, `"t"`, the request number, `p`)
/// straight from their bytes when they are plain: a string without escapes or control characters, or a
/// non-negative integer. Anything else is read by the full parser. Every request has a dozen of them,
/// and setting up the tree parser for each cost more than the rest of the request's parsing.
public enum JSONPlainScalar {
    /// The string a JSON string token stands for, or nil when it is not a plain string (escaped,
    /// containing control characters or invalid UTF-8, or not a string at all).
    public static func plainString(_ token: some BidirectionalCollection<UInt8>) -> String? {
        guard token.count >= 2, token.first == UInt8(ascii: "\"") else { return nil }
        let content = token.dropFirst().dropLast()
        guard token.last == UInt8(ascii: "\""),
            !content.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 < 0x20 })
        else { return nil }
        return String(validating: content, as: UTF8.self)
    }

    /// A JSON string token's value: plain strings directly, others through the parser; nil when the
    /// token is not a valid JSON string.
    public static func string(_ token: some BidirectionalCollection<UInt8>) -> String? {
        if let plain = plainString(token) { return plain }
        return (try? Node(jsonBytes: Array(token)))?.stringValue
    }

    /// A JSON number token that is a plain non-negative integer of at most 18 digits (no sign,
    /// fraction, exponent or leading zero), else nil.
    public static func plainInteger(_ token: some BidirectionalCollection<UInt8>) -> Int64? {
        guard !token.isEmpty, token.count <= 18, token.first != UInt8(ascii: "0") || token.count == 1 else { return nil }
        var value: Int64 = 0
        for byte in token {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
