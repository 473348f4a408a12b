import HearthCore
#if canImport(Glibc)
    import Glibc
#endif

/// How far a streamed import has come, in bytes of the file.
public struct ImportProgress: Sendable, Equatable {
    public var bytesRead: Int
    public var bytesTotal: Int?
    public var recordsWritten: Int
}

/// Where a streamed import's operations go: `.put`s of values, `.putPriority`s of large objects, and a
/// `.removeSubtree` before each key of a large object (an object may repeat a key: the last value wins).
public protocol ImportSink {
    /// Records written so far.
    var written: Int { get }
    mutating func apply(_ operation: WriteBatch.Operation) throws
}

/// A window over a file, refilled with read(2) as the scanner moves on.
public struct JSONInput {
    let descriptor: Int32
    let byteCount: Int?
    var buffer: [UInt8] = []
    /// Next unread byte and end of valid bytes in `buffer`.
    var position = 0
    var end = 0
    /// File offset of `buffer[0]`.
    var offset = 0
    var atEOF = false
    static let stepBytes = 8 << 20

    public init(descriptor: Int32, byteCount: Int?) {
        self.descriptor = descriptor
        self.byteCount = byteCount
        buffer = [UInt8](repeating: 0, count: Self.stepBytes)
    }

    var bytesRead: Int { offset + position }

    /// Makes at least `count` bytes available from `position` unless the file ends first; returns
    /// how many are available.
    @discardableResult
    mutating func ensure(_ count: Int) throws(StorageError) -> Int {
        while end - position < count && !atEOF {
            if position > 0 {  // slide the unread bytes to the front
                buffer.withUnsafeMutableBufferPointer { bytes in
                    _ = memmove(bytes.baseAddress!, bytes.baseAddress! + position, end - position)
                }
                offset += position
                end -= position
                position = 0
            }
            if buffer.count - end < Self.stepBytes / 2 || buffer.count < count {
                buffer.append(contentsOf: repeatElement(0, count: max(Self.stepBytes, count - buffer.count + Self.stepBytes)))
            }
            let got = buffer.withUnsafeMutableBufferPointer { bytes in
                read(descriptor, bytes.baseAddress! + end, bytes.count - end)
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw StorageError(.io, "cannot read the import file: \(String(cString: strerror(errno))). Nothing was imported.")
            }
            if got == 0 { atEOF = true } else { end += got }
        }
        return end - position
    }

    /// The next byte that is not JSON white space, without consuming it; nil at the end of the file.
    mutating func peek() throws(StorageError) -> UInt8? {
        while true {
            if position == end, try ensure(1) == 0 { return nil }
            let byte = buffer[position]
            if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 } else { return byte }
        }
    }

    /// The length of the JSON value starting at `position` when it is at most `limit` bytes (it is
    /// then all in the buffer), or nil when it is longer. Only finds where it ends; the parser checks it.
    mutating func valueLength(limit: Int) throws(StorageError) -> Int? {
        var index = 0
        var depth = 0
        var inString = false
        while true {
            if index >= end - position {
                if index >= limit { return nil }
                if try ensure(min(limit, index + (1 << 20))) <= index {
                    return index  // end of file: let the parser judge what is there
                }
            }
            let byte = buffer[position + index]
            if inString {
                if byte == UInt8(ascii: "\\") {
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return index + 1 }
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return index }  // a scalar ended by its container
                    depth -= 1
                    if depth == 0 { return index + 1 }
                case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
                    if depth == 0 { return index }
                default: break
                }
            }
            index += 1
        }
    }
}

/// Walks a Firebase export, parsing small values whole and large containers key by key, and hands
/// the records' operations to a sink (an engine's writer, inside the import's transaction).
public struct StreamingImporter {
    var input: JSONInput
    let wholeValueBytesMax: Int
    public var progress: ((ImportProgress) -> Void)?
    var lastReport = 0

    public init(input: JSONInput, wholeValueBytesMax: Int = 4 << 20) {
        self.input = input
        self.wholeValueBytesMax = wholeValueBytesMax
    }

    public mutating func run(into writer: inout some ImportSink) throws {
        guard try input.peek() != nil else { throw invalid("the file is empty") }
        _ = try value(at: .root, into: &writer)
        if try input.peek() != nil { throw invalid("there is more after the top-level value (byte \(input.bytesRead))") }
        progress?(.init(bytesRead: input.bytesRead, bytesTotal: input.byteCount, recordsWritten: writer.written))
    }

    func invalid(_ what: String) -> StorageError {
        StorageError(.invalidData, "the import file is not valid Firebase JSON: \(what). Nothing was imported.")
    }

    /// Parses `length` bytes at the input's position with HearthCore's parser and consumes them.
    mutating func parse(_ length: Int, at path: Path) throws -> Node {
        let start = input.position
        let node: Node
        do {
            node = try input.buffer.withUnsafeBytes { bytes in
                try Node(
                    jsonBytes: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]),
                    options: JSONParseOptions(validation: .write(at: path)))
            }
        } catch {
            throw invalid("\(error) (at \(path.slashed), byte \(input.bytesRead))")
        }
        input.position += length
        return node
    }

    /// Writes the value at the input's position to `path`; true when it stored anything.
    mutating func value(at path: Path, into writer: inout some ImportSink) throws -> Bool {
        guard let first = try input.peek() else { throw invalid("the file ends early") }
        if input.bytesRead - lastReport >= 8 << 20 {
            lastReport = input.bytesRead
            progress?(.init(bytesRead: input.bytesRead, bytesTotal: input.byteCount, recordsWritten: writer.written))
        }
        if let length = try input.valueLength(limit: wholeValueBytesMax) {
            let node = try parse(length, at: path)
            if node.isEmpty { return false }
            try writer.apply(.put(path, node))
            return true
        }
        guard first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else {
            throw invalid("a value longer than \(wholeValueBytesMax) bytes at \(path.slashed) that is not an object or array")
        }
        input.position += 1
        let isArray = first == UInt8(ascii: "[")
        let close = isArray ? UInt8(ascii: "]") : UInt8(ascii: "}")
        var wrote = false
        var priority: Priority?
        var index = 0
        if try input.peek() == close {
            input.position += 1
            return false
        }
        while true {
            let childPath: Path
            if isArray {
                childPath = path.appending(ChildKey(String(index)))
                index += 1
            } else {
                guard try input.peek() == UInt8(ascii: "\""), let keyLength = try input.valueLength(limit: 4 * Limits.keyLengthBytesMax + 2)
                else { throw invalid("expected a key at \(path.slashed), byte \(input.bytesRead)") }
                guard let key = try parse(keyLength, at: .root).stringValue else {
                    throw invalid("expected a key at \(path.slashed), byte \(input.bytesRead)")
                }
                guard try input.peek() == UInt8(ascii: ":") else { throw invalid("expected ':' after key '\(key)' at \(path.slashed)") }
                input.position += 1
                if key == ChildKey.priorityKey.string {
                    guard try input.peek() != nil, let length = try input.valueLength(limit: 1 << 20) else {
                        throw invalid("a .priority too long at \(path.slashed)")
                    }
                    let node = try parse(length, at: .root)
                    if !node.isEmpty {
                        guard let value = Priority(node) else { throw invalid("a .priority that is not a number, string or null at \(path.slashed)") }
                        priority = value
                    }
                    childPath = .root  // nothing to write
                } else {
                    let childKey = ChildKey(key)
                    do {
                        try KeyValidation.validate(childKey, in: path)
                        childPath = path.appending(childKey)
                        try KeyValidation.validateLength(of: childPath)
                    } catch { throw invalid("\(error)") }
                    // A large object may repeat a key: the last value wins, as with the whole-value parser.
                    try writer.apply(.removeSubtree(childPath))
                }
            }
            if !childPath.isRoot || isArray {
                if try value(at: childPath, into: &writer) { wrote = true }
            }
            switch try input.peek() {
            case UInt8(ascii: ",")?: input.position += 1
            case close?:
                input.position += 1
                if wrote, let priority { try writer.apply(.putPriority(path, priority)) }
                return wrote
            default: throw invalid("expected ',' or '\(Character(UnicodeScalar(close)))' at \(path.slashed), byte \(input.bytesRead)")
            }
        }
    }
}
