public import HearthCore

/// A path as the engines that keep one record per leaf key it (SQLite's `nodes.path`, PostgreSQL's
/// `hearth_records.path`; docs/storage.md): each key's UTF-8 bytes followed by ``separator``, so
/// `users/ada/name` is `users␁ada␁name␁` and the root is empty.
///
/// Firebase keys cannot hold control characters, so U+0001 is unambiguous, and since it sorts below every
/// byte a key can hold, a node's record comes first in byte order and its whole subtree follows as one
/// contiguous range `[bytes, subtreeEnd)`: removing a subtree is one range delete, and loading is one
/// ordered scan (``RecordTreeBuilder``).
///
///     var path = EncodedPath(Path("users/ada"))   // users␁ada␁
///     path.subtreeEnd                              // users␁ada␂
public struct EncodedPath: Sendable, Hashable {
    /// The byte after every key.
    public static let separator: UInt8 = 0x01

    public var bytes: [UInt8] = []

    /// An empty path (the root), with room for a typical path so it can be reused as a buffer.
    public init() { bytes.reserveCapacity(256) }

    public init(_ path: Path) {
        self.init()
        for key in path.keys { append(key) }
    }

    public mutating func append(_ key: ChildKey) {
        bytes.append(contentsOf: key.string.utf8)
        bytes.append(Self.separator)
    }

    /// The first encoded path after every path in this one's subtree. The root's subtree is everything,
    /// which no end bounds: callers delete everything instead (see `isRoot`).
    public var subtreeEnd: [UInt8] {
        precondition(!bytes.isEmpty, "the root's subtree has no end: delete everything instead")
        var end = bytes
        end[end.count - 1] = Self.separator + 1
        return end
    }

    /// True for the root's (empty) path.
    public var isRoot: Bool { bytes.isEmpty }

    /// The byte ranges of an encoded path's keys, into `segments` (emptied first; reused by callers that
    /// split a row at a time).
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) when the path does not end with its separator.
    public static func split(_ path: UnsafeBufferPointer<UInt8>, into segments: inout [Range<Int>]) throws(StorageError) {
        segments.removeAll(keepingCapacity: true)
        var start = 0
        for index in 0..<path.count where path[index] == separator {
            segments.append(start..<index)
            start = index + 1
        }
        guard start == path.count else { throw .corruptRecords("a path that does not end with its separator") }
    }
}
