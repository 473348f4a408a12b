/// Reads plain JSON scalars straight from their bytes: a string without escapes or control characters,
/// a non-negative integer. Anything else is read by the full parser. Requests are made of them (the
/// realtime wire format's keys, action and request number; most written values), and setting up the
/// tree parser for each cost more than the rest of a request's parsing.
public enum JSONPlainScalar {
    /// The string a JSON string token stands for, or nil when it is not a plain string (escaped,
    /// containing control characters or invalid UTF-8, or not a string at all).
    public static func plainString(_ token: some Collection<UInt8>) -> String? {
        withBytes(of: token) { plainString(bytes: $0) }
    }

    /// A JSON string token's value: plain strings directly, others through the parser; nil when the
    /// token is not a valid JSON string.
    public static func string(_ token: some Collection<UInt8>) -> String? {
        withBytes(of: token) { bytes in
            if let plain = plainString(bytes: bytes) { return plain }
            return (try? Node(jsonBytes: bytes))?.stringValue
        }
    }

    /// A JSON number token that is a plain non-negative integer of at most 18 digits (no sign,
    /// fraction, exponent or leading zero), else nil.
    public static func plainInteger(_ token: some Collection<UInt8>) -> Int64? {
        withBytes(of: token) { plainInteger(bytes: $0) }
    }

    /// `body` over the token's bytes: contiguous tokens (arrays, slices, buffers) without a copy, so the
    /// scans below are specialized loops over memory rather than generic collection walks.
    private static func withBytes<Result>(of token: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        if let result = token.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return result }
        return Array(token).withUnsafeBytes(body)
    }

    static func plainString(bytes token: UnsafeRawBufferPointer) -> String? {
        guard token.count >= 2, token[0] == UInt8(ascii: "\""), token[token.count - 1] == UInt8(ascii: "\"") else { return nil }
        let content = UnsafeRawBufferPointer(rebasing: token[1..<(token.count - 1)])
        var ascii = true
        for byte in content {
            if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") || byte < 0x20 { return nil }
            if byte >= 0x80 { ascii = false }
        }
        // Validated here rather than with String(validating:as:), which needs iOS 18 / macOS 15 (the
        // client links this module: docs/swift-sdk.md).
        let bytes = content.bindMemory(to: UInt8.self)
        if !ascii, JSONParser.firstInvalidUTF8(bytes) != nil { return nil }
        return JSONParser.stringFromValidUTF8(bytes, ascii: ascii)
    }

    static func plainInteger(bytes token: UnsafeRawBufferPointer) -> Int64? {
        guard !token.isEmpty, token.count <= 18, token[0] != UInt8(ascii: "0") || token.count == 1 else { return nil }
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
        case UInt8(ascii: "\""): return plainString(bytes: token).map { Node($0) }
        case UInt8(ascii: "t"): return token.elementsEqual("true".utf8) ? Node(true) : nil
        case UInt8(ascii: "f"): return token.elementsEqual("false".utf8) ? Node(false) : nil
        default: return plainInteger(bytes: token).map { Node($0) }
        }
    }
}
