public import HearthCore
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Builds a tree from an engine's records, read in ``EncodedPath`` byte order, with a stack of open inner
/// nodes: O(records), with no sorting unless a node's keys differ between byte order and Firebase key
/// order (integer keys). The SQLite and PostgreSQL engines decode their columns and hand each record here.
///
///     var builder = RecordTreeBuilder()
///     try builder.add(path: pathBytes, leaf: Node("Ada"), priority: nil)   // users␁ada␁name␁
///     let root = try builder.finish()
///
/// A record is a leaf (`leaf` non-nil, with its priority if any) or an inner node's priority marker
/// (`leaf` nil, `priority` non-nil); the marker comes before its children, as byte order puts it.
public struct RecordTreeBuilder {
    struct Frame {
        var keyBytes: [UInt8]
        var key: ChildKey
        var priority: Priority?
        /// Some child key may order differently as a Firebase key than as bytes (see `ChildBuffer`).
        var mayNeedSort = false
    }

    /// frames[0] is the root; frames[i] is the open node at depth i.
    var frames: [Frame] = [Frame(keyBytes: [], key: ChildKey(""))]
    /// children[i] holds the children of frames[i].
    var children: [ChildBuffer] = [ChildBuffer()]
    /// The encoded path of the innermost open node (every open frame's key and separator).
    var open: [UInt8] = []
    var rootLeaf: Node?
    /// Segment boundaries of the current row, reused.
    var segments: [Range<Int>] = []

    public init() {}

    /// Adds the record at the encoded `path`: a leaf, or (with `leaf` nil) an inner node's priority.
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) for records Hearth never writes (out of order, a value and
    ///   children at one key, a malformed path).
    public mutating func add(path: UnsafeBufferPointer<UInt8>, leaf: Node?, priority: Priority?) throws(StorageError) {
        // Fast path, most rows: a leaf directly below the innermost open node (the previous row's
        // parent). One prefix comparison and one scan of the last key; no segment list, no frame walk.
        let openCount = open.count
        if let leaf, path.count > openCount + 1, path[path.count - 1] == EncodedPath.separator, let pathBase = path.baseAddress,
            open.withUnsafeBufferPointer({ openBytes in
                openCount == 0 || openBytes.baseAddress.map { memcmp($0, pathBase, openCount) == 0 } ?? false
            })
        {
            let last = UnsafeBufferPointer(rebasing: path[openCount..<(path.count - 1)])
            if let lastBase = last.baseAddress, memchr(lastBase, Int32(EncodedPath.separator), last.count) == nil {
                try appendChild(last, priority == nil ? leaf : leaf.withPriority(priority))
                return
            }
        }
        try addSlowly(path, leaf: leaf, priority: priority)
    }

    private mutating func push(_ frame: Frame) {
        open.append(contentsOf: frame.keyBytes)
        open.append(EncodedPath.separator)
        frames.append(frame)
        if children.count < frames.count { children.append(ChildBuffer()) }
    }

    private mutating func addSlowly(_ path: UnsafeBufferPointer<UInt8>, leaf: Node?, priority: Priority?) throws(StorageError) {
        try EncodedPath.split(path, into: &segments)

        var common = 0
        while common < frames.count - 1, common < segments.count,
            frames[common + 1].keyBytes.elementsEqual(path[segments[common]])
        {
            common += 1
        }
        while frames.count - 1 > common { try closeTop() }

        if segments.isEmpty {  // the root's own record
            if let leaf { rootLeaf = leaf.withPriority(priority) } else { frames[0].priority = priority }
            return
        }
        if common == segments.count { throw .corruptRecords("a record after its own children") }
        for index in common..<(segments.count - 1) {
            let bytes = Array(path[segments[index]])
            push(Frame(keyBytes: bytes, key: ChildKey(String(decoding: bytes, as: UTF8.self))))
        }
        let lastBytes = path[segments[segments.count - 1]]
        if let leaf {
            try appendChild(UnsafeBufferPointer(rebasing: lastBytes), leaf.withPriority(priority))
        } else {
            let bytes = Array(lastBytes)
            push(Frame(keyBytes: bytes, key: ChildKey(String(decoding: bytes, as: UTF8.self)), priority: priority))
        }
    }

    private mutating func appendChild(_ bytes: UnsafeBufferPointer<UInt8>, _ node: Node) throws(StorageError) {
        // Byte order is Firebase key order unless a key may be an integer (a digit or '-' first) or
        // holds non-ASCII characters (UTF-16 order differs above U+FFFF).
        if let first = bytes.first, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) || bytes.contains(where: { $0 >= 0x80 }) {
            frames[frames.count - 1].mayNeedSort = true
        }
        try appendChild(ChildKey(String(decoding: bytes, as: UTF8.self)), node)
    }

    private mutating func appendChild(_ key: ChildKey, _ node: Node) throws(StorageError) {
        let buffer = children[frames.count - 1]
        if let last = buffer.lastKey, last == key {
            throw .corruptRecords("both a value and children at key '\(key.string)'")
        }
        buffer.append((key, node))
    }

    private mutating func closeTop() throws(StorageError) {
        let frame = frames.removeLast()
        open.removeLast(frame.keyBytes.count + 1)
        let node = makeNode(frame, children[frames.count])
        if !node.isEmpty { try frame.keyBytes.withUnsafeBufferPointer { bytes throws(StorageError) in try appendChild(bytes, node) } }
    }

    private func makeNode(_ frame: Frame, _ buffer: ChildBuffer) -> Node {
        Node(children: buffer.takeMap(mayNeedSort: frame.mayNeedSort)).withPriority(frame.priority)
    }

    /// The tree of every record added.
    public mutating func finish() throws(StorageError) -> Node {
        while frames.count > 1 { try closeTop() }
        if let rootLeaf {
            guard children[0].count == 0 else { throw .corruptRecords("both a value and children at the root") }
            return rootLeaf
        }
        return makeNode(frames[0], children[0])
    }
}

extension StorageError {
    /// Records that Hearth never writes: the storage was damaged or written by something else.
    public static func corruptRecords(_ what: String) -> StorageError {
        StorageError(.corrupt, "the database holds \(what), which Hearth never writes. Restore the latest backup, or export and re-import the data.")
    }
}

/// The children of an open node, in a buffer the finished node's map moves them out of (no retain
/// and release of every key and value, as copying into the map would). One per depth, reused by
/// every node at that depth.
final class ChildBuffer {
    typealias Element = (key: ChildKey, value: Node)
    // Unchecked: only the builder's thread touches a buffer, and the runtime's access checks on
    // every append cost more than the copy this buffer saves.
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<Element>
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var capacity = 16

    init() { base = .allocate(capacity: capacity) }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    var lastKey: ChildKey? { count == 0 ? nil : base[count - 1].key }

    func append(_ element: Element) {
        if count == capacity {
            let grown = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
            base = grown
            capacity *= 2
        }
        (base + count).initialize(to: element)
        count += 1
    }

    /// The children as a map, sorted first when `mayNeedSort`; the buffer is empty afterwards.
    func takeMap(mayNeedSort: Bool) -> ChildrenMap {
        var elements = UnsafeMutableBufferPointer(start: base, count: count)
        // Records come in byte order; Firebase key order differs only for integer keys and some
        // characters above U+FFFF, so check in one pass and sort only when needed.
        if mayNeedSort, zip(elements, elements.dropFirst()).contains(where: { !($0.key < $1.key) }) {
            elements.sort { $0.key < $1.key }
        }
        let map = ChildrenMap(movingSortedUnique: base, count: count)
        count = 0
        return map
    }
}
