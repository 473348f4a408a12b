/// Reads plain JSON scalars straight from their bytes: a string without escapes or control characters,
/// a non-negative integer. Anything else is read by the full parser. Requests are made of them (the
/// realtime wire format's keys, action and request number; most written values), and setting up the
/// tree parser for each cost more than the rest of a request's parsing.
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

    /// Longest plain string document read directly: well inside `Limits.stringLengthBytesMax`, so the
    /// string limit never applies here.
    static let documentBytesMax = 64 * 1024

    /// A whole JSON document that is one plain string, a non-negative integer, `true` or `false`, as a
    /// node; nil for anything else (the parser reads it, and reports its errors).
    static func plainDocument(_ bytes: UnsafeRawBufferPointer) -> Node? {
        guard bytes.count <= documentBytesMax, var start = bytes.indices.first else { return nil }
        var end = bytes.count
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        let token = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        guard let first = token.first else { return nil }
        switch first {
        case UInt8(ascii: "\""): return plainString(token).map { Node($0) }
        case UInt8(ascii: "t"): return token.elementsEqual("true".utf8) ? Node(true) : nil
        case UInt8(ascii: "f"): return token.elementsEqual("false".utf8) ? Node(false) : nil
        default: return plainInteger(token).map { Node($0) }
        }
    }
}
