import HearthCore

/// The members of one JSON object, each key decoded and each value left as its byte range: how the
/// feed's entries are read without losing `null` members (``Node`` drops them, as Firebase does, but in
/// an update's `data` a `null` is a removal that must be seen). Values are parsed by the caller, with
/// ``Node/init(jsonBytes:options:)``, only where wanted.
///
///     for member in try JSONMembers(bytes, in: bytes.indices) { print(member.key, member.value) }
struct JSONMembers: Sequence {
    struct Member {
        let key: String
        let value: Range<Int>
    }

    private let members: [Member]

    /// The members of the object spanning `range` of `bytes` (surrounding whitespace allowed).
    init(_ bytes: [UInt8], in range: Range<Int>) throws(DataError) {
        var scanner = Scanner(bytes: bytes, index: range.lowerBound, end: range.upperBound)
        members = try scanner.object()
        scanner.skipWhitespace()
        guard scanner.index == range.upperBound else { throw scanner.error("nothing after the object") }
    }

    func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

    /// The elements of the array spanning `range` of `bytes`, each left as its byte range.
    static func elements(_ bytes: [UInt8], in range: Range<Int>) throws(DataError) -> [Range<Int>] {
        var scanner = Scanner(bytes: bytes, index: range.lowerBound, end: range.upperBound)
        return try scanner.array()
    }

    /// Whether `range` holds the literal `null`.
    static func isNull(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        range.count == 4 && bytes[range].elementsEqual("null".utf8)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index: Int
        let end: Int
        /// Objects and arrays deeper than this are refused (the value parser has the same bound).
        static let nestingMax = 1000

        func error(_ what: String) -> DataError { DataError(.invalidJSON, "Invalid JSON: \(what) at byte \(index)", byteOffset: index) }

        mutating func skipWhitespace() {
            while index < end, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(DataError) {
            skipWhitespace()
            guard index < end, bytes[index] == byte else { throw error("expected '\(Character(UnicodeScalar(byte)))'") }
            index += 1
        }

        mutating func array() throws(DataError) -> [Range<Int>] {
            try expect(UInt8(ascii: "["))
            var elements: [Range<Int>] = []
            skipWhitespace()
            if index < end, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return elements
            }
            while true {
                skipWhitespace()
                let start = index
                try skipValue(nesting: 0)
                elements.append(start..<index)
                skipWhitespace()
                guard index < end else { throw error("an unfinished array") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "]"))
                return elements
            }
        }

        mutating func object() throws(DataError) -> [Member] {
            try expect(UInt8(ascii: "{"))
            var members: [Member] = []
            skipWhitespace()
            if index < end, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return members
            }
            while true {
                skipWhitespace()
                let keyStart = index
                try skipString()
                let key = try Node(jsonBytes: Array(bytes[keyStart..<index])).stringValue ?? ""
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                let valueStart = index
                try skipValue(nesting: 0)
                members.append(Member(key: key, value: valueStart..<index))
                skipWhitespace()
                guard index < end else { throw error("an unfinished object") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                return members
            }
        }

        /// Moves past one string, escapes included (the value parser checks them).
        mutating func skipString() throws(DataError) {
            guard index < end, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string") }
            index += 1
            while index < end {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case UInt8(ascii: "\\"): index += 2
                default: index += 1
                }
            }
            throw error("an unfinished string")
        }

        /// Moves past one value; its syntax is checked by whoever parses it.
        mutating func skipValue(nesting: Int) throws(DataError) {
            guard nesting < Self.nestingMax else { throw error("nesting too deep") }
            skipWhitespace()
            guard index < end else { throw error("expected a value") }
            switch bytes[index] {
            case UInt8(ascii: "\""): try skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = bytes[index] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                skipWhitespace()
                if index < end, bytes[index] == close {
                    index += 1
                    return
                }
                while true {
                    if close == UInt8(ascii: "}") {
                        skipWhitespace()
                        try skipString()
                        try expect(UInt8(ascii: ":"))
                    }
                    try skipValue(nesting: nesting + 1)
                    skipWhitespace()
                    guard index < end else { throw error("an unfinished value") }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    try expect(close)
                    return
                }
            default:
                let start = index
                while index < end {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte == 0x20 || byte == 0x0A
                        || byte == 0x0D || byte == 0x09
                    {
                        break
                    }
                    index += 1
                }
                guard index > start else { throw error("expected a value") }
            }
        }
    }
}
