public import HearthCore

/// Writes an engine's records, read in ``EncodedPath`` byte order, as Firebase's export JSON, without
/// building the tree: memory holds the keys of the open objects and one chunk, whatever the namespace's
/// size. What it writes parses to the tree ``RecordTreeBuilder`` makes of the same records (what
/// ``StorageJSON/write(_:chunkByteCount:to:)`` writes), with keys in byte order rather than Firebase's
/// (integer keys): JSON objects are unordered, and an import reads either the same.
///
///     var writer = RecordJSONWriter { chunk in try file.write(chunk) }
///     try writer.add(path: pathBytes, leaf: Node("Ada"), priority: nil)   // users␁ada␁name␁
///     try writer.finish()                                                 // {"users":{"ada":{"name":"Ada"}}}
public struct RecordJSONWriter: RecordSink {
    public typealias Write = ([UInt8]) throws(StorageError) -> Void

    private let chunkByteCount: Int
    private let write: Write
    private var buffer: [UInt8] = []
    /// Keys of the open objects below the root, outermost first.
    private var open: [[UInt8]] = []
    /// Per open object, the root's first: the last member's key (nil before the first member).
    private var lastKeys: [[UInt8]?] = [nil]
    private var rootOpened = false
    private var rootLeafWritten = false
    /// Segment boundaries of the current record, reused.
    private var segments: [Range<Int>] = []
    /// Records written so far.
    public private(set) var records = 0

    public init(chunkByteCount: Int = 1 << 20, write: @escaping Write) {
        self.chunkByteCount = chunkByteCount
        self.write = write
        buffer.reserveCapacity(chunkByteCount + 4096)
    }

    public mutating func add(path: UnsafeBufferPointer<UInt8>, leaf: Node?, priority: Priority?) throws(StorageError) {
        try EncodedPath.split(path, into: &segments)
        guard !rootLeafWritten else { throw .corruptRecords("both a value and children at the root") }
        records += 1
        if segments.isEmpty, let leaf {
            guard !rootOpened else { throw .corruptRecords("both a value and children at the root") }
            (priority.map { leaf.withPriority($0) } ?? leaf).appendJSON(to: &buffer, format: .export)
            rootLeafWritten = true
            return
        }
        if !rootOpened {
            buffer.append(UInt8(ascii: "{"))
            rootOpened = true
        }
        // Close the open objects this record is not in; open the ones it is in below them.
        var common = 0
        while common < open.count, common < segments.count, open[common].elementsEqual(path[segments[common]]) { common += 1 }
        while open.count > common { close() }
        let depth = leaf == nil ? segments.count : segments.count - 1
        while open.count < depth {
            let key = Array(path[segments[open.count]])
            try member(key)
            buffer.append(UInt8(ascii: "{"))
            open.append(key)
            lastKeys.append(nil)
        }
        if let leaf {
            try member(Array(path[segments[segments.count - 1]]))
            (priority.map { leaf.withPriority($0) } ?? leaf).appendJSON(to: &buffer, format: .export)
        } else {
            // A marker comes before the children of its node, so the node was just opened.
            guard let priority, lastKeys[lastKeys.count - 1] == nil else {
                throw .corruptRecords("an inner node's priority out of order")
            }
            buffer.append(contentsOf: Array(#"".priority":"#.utf8))
            priority.node.appendJSON(to: &buffer, format: .export)
            lastKeys[lastKeys.count - 1] = Array(ChildKey.priorityKey.string.utf8)
        }
        if buffer.count >= chunkByteCount { try flush() }
    }

    /// Closes what is open and writes the rest; `null` when there were no records.
    public mutating func finish() throws(StorageError) {
        if rootOpened {
            while !open.isEmpty { close() }
            buffer.append(UInt8(ascii: "}"))
        } else if !rootLeafWritten {
            buffer.append(contentsOf: Array("null".utf8))
        }
        buffer.append(UInt8(ascii: "\n"))
        try flush()
    }

    /// Writes `"key":` in the innermost open object, after a comma when it has members already.
    private mutating func member(_ key: [UInt8]) throws(StorageError) {
        if let last = lastKeys[lastKeys.count - 1] {
            // Keys come in byte order, so a repeated key is the one just written.
            guard last != key else { throw .corruptRecords("both a value and children at key '\(String(decoding: key, as: UTF8.self))'") }
            buffer.append(UInt8(ascii: ","))
        }
        lastKeys[lastKeys.count - 1] = key
        Node(String(decoding: key, as: UTF8.self)).appendJSON(to: &buffer, format: .export)  // the key, escaped
        buffer.append(UInt8(ascii: ":"))
    }

    private mutating func close() {
        buffer.append(UInt8(ascii: "}"))
        open.removeLast()
        lastKeys.removeLast()
    }

    private mutating func flush() throws(StorageError) {
        guard !buffer.isEmpty else { return }
        try write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
