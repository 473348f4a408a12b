/// Why a key, path or value cannot be stored. Errors name the offending key and the rule it broke,
/// with a stable `code` that reaches clients and a message safe to show them.
public struct DataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable, machine-readable reason.
    public enum Code: String, Sendable, Hashable {
        case invalidKey = "INVALID_KEY"
        case invalidPath = "INVALID_PATH"
        case pathTooDeep = "PATH_TOO_DEEP"
        case pathTooLong = "PATH_TOO_LONG"
        case stringTooLong = "STRING_TOO_LONG"
        case invalidData = "INVALID_DATA"
        case invalidPriority = "INVALID_PRIORITY"
        case invalidServerValue = "INVALID_SERVER_VALUE"
        case overlappingPaths = "OVERLAPPING_PATHS"
        case invalidJSON = "INVALID_JSON"
        case hashMismatch = "DATASTALE"
        case invalidQuery = "INVALID_QUERY"
    }

    public let code: Code
    public let message: String
    /// For `invalidJSON`: the byte offset in the input where parsing failed.
    public let byteOffset: Int?

    public init(_ code: Code, _ message: String, byteOffset: Int? = nil) {
        self.code = code
        self.message = message
        self.byteOffset = byteOffset
    }

    public var description: String { message }
}

/// Firebase's rules for keys and paths (docs/protocol.md §5.2).
public enum KeyValidation {
    /// Checks one key: non-empty, at most `Limits.keyLengthBytesMax` UTF-8 bytes, and none of
    /// `. $ # [ ] /` or ASCII control characters.
    public static func validate(_ key: ChildKey, in path: Path? = nil) throws(DataError) {
        var where_: String { path.map { " in path '\($0.slashed)'" } ?? "" }
        if key.string.isEmpty { throw DataError(.invalidKey, "Invalid key ''\(where_): keys must not be empty.") }
        if key.string.utf8.count > Limits.keyLengthBytesMax {
            throw DataError(
                .invalidKey,
                "Invalid key '\(key.string.prefix(40))…'\(where_): keys are limited to \(Limits.keyLengthBytesMax) bytes of UTF-8.")
        }
        var text = key.string
        let forbidden = text.withUTF8 { bytes in bytes.first(where: isForbidden) }
        if let byte = forbidden {
            let shown = byte < 0x20 || byte == 0x7F ? codePointName(byte) : "'\(Character(UnicodeScalar(byte)))'"
            throw DataError(
                .invalidKey,
                "Invalid key '\(key.string)'\(where_): keys must not contain '.', '$', '#', '[', ']', '/' or ASCII control characters (found \(shown)).")
        }
    }

    static func codePointName(_ byte: UInt8) -> String {
        let hex = String(byte, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: 4 - hex.count) + hex
    }

    @inlinable
    static func isForbidden(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x00...0x1F, 0x7F, UInt8(ascii: "."), UInt8(ascii: "$"), UInt8(ascii: "#"),
            UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// Checks a write location: every key valid (a last `.priority` allowed), depth and length
    /// within limits.
    public static func validate(writePath path: Path) throws(DataError) {
        for (index, key) in path.keys.enumerated() {
            if key == .priorityKey && index == path.count - 1 && index > 0 { continue }
            try validate(key, in: path)
        }
        try validateLength(of: path)
    }

    /// Checks a location to read or listen at: every key valid, depth and length within limits. No
    /// `.priority` here: a client reads a priority with its node, never as a location of its own.
    public static func validate(readPath path: Path) throws(DataError) {
        for key in path.keys { try validate(key, in: path) }
        try validateLength(of: path)
    }

    /// Checks depth and byte length of a location (keys already valid).
    public static func validateLength(of path: Path) throws(DataError) {
        if path.count > Limits.pathDepthMax {
            throw DataError(
                .pathTooDeep,
                "Path '\(path.slashed.prefix(80))' is \(path.count) keys deep; the limit is \(Limits.pathDepthMax).")
        }
        var bytes = 0
        for key in path.keys { bytes += key.string.utf8.count + 1 }
        if bytes > Limits.pathLengthBytesMax {
            throw DataError(
                .pathTooLong,
                "Path '\(path.slashed.prefix(80))…' is \(bytes) bytes long; the limit is \(Limits.pathLengthBytesMax).")
        }
    }

    /// Checks data about to be written at `path`: every key below it valid, every location within
    /// depth and length limits, every string within `Limits.stringLengthBytesMax`.
    public static func validate(value: Node, at path: Path) throws(DataError) {
        try validate(writePath: path)
        try validateTree(value, path: path, depth: path.count, bytes: path.keys.reduce(0) { $0 + $1.string.utf8.count + 1 })
    }

    static func validateTree(_ node: Node, path: Path, depth: Int, bytes: Int) throws(DataError) {
        if let string = node.stringValue, string.utf8.count > Limits.stringLengthBytesMax {
            throw DataError(
                .stringTooLong,
                "String at '\(path.slashed)' is \(string.utf8.count) bytes; the limit is \(Limits.stringLengthBytesMax).")
        }
        guard node.hasChildren else { return }
        var failure: DataError?
        node.children.forEach { key, child in
            let childPath = path.appending(key)
            do throws(DataError) {
                try validate(key, in: childPath)
                let childBytes = bytes + key.string.utf8.count + 1
                if depth + 1 > Limits.pathDepthMax || childBytes > Limits.pathLengthBytesMax {
                    try validateLength(of: childPath)
                }
                try validateTree(child, path: childPath, depth: depth + 1, bytes: childBytes)
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
    }
}
