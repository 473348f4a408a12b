public import HearthCore
public import HearthStorage
internal import CSQLite
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

extension SQLiteStorageEngine {
    /// Reads every record in path order on a reader connection of its own and builds the tree depth
    /// first: O(records), with no sorting unless a node's keys differ between byte order and Firebase key
    /// order (integer keys); then applies the write log's batches not yet folded into the records.
    /// `progress` gets the records read every 100,000.
    public func load(progress: ((LoadProgress) -> Void)?) throws(StorageError) -> Node {
        do {
            let reader = try SQLiteConnection(path: path, create: false)
            defer { reader.close() }
            try Self.configure(reader)
            try reader.execute("BEGIN")  // one snapshot for the whole scan
            defer { try? reader.execute("COMMIT") }
            let statement = try reader.prepare("SELECT path, value, priority FROM nodes ORDER BY path")
            var builder = TreeBuilder()
            var count = 0
            while try statement.step() {
                try builder.add(statement)
                count += 1
                if count % 100_000 == 0 { progress?(LoadProgress(done: count, total: nil)) }
            }
            var root = try builder.finish()
            // Then the commits not yet folded into `nodes`, in the same snapshot.
            try WriteLog.forEachBatch(in: reader) { batch in root = root.applying(batch) }
            progress?(LoadProgress(done: count, total: count))
            return root
        } catch let error as SQLiteError {
            throw Self.storageError(error, path: path)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.io, "\(error)")
        }
    }

    /// Copies the database to `destination` with SQLite's online backup API while writes go on: the copy
    /// is one consistent snapshot, written to `destination.partial` and renamed into place only when
    /// complete, so a failed backup never leaves a half-written file under the final name.
    public func backup(to destination: String, progress: ((LoadProgress) -> Void)?) throws(StorageError) {
        let partial = destination + ".partial"
        unlink(partial)
        // A backup holds every value of the database: private to its owner, like the database itself.
        _ = OwnerOnlyFiles.createFile(partial)
        do {
            let source = try SQLiteConnection(path: path, create: false)
            defer { source.close() }
            try Self.configure(source)
            // Holding a read transaction pins one WAL snapshot, so steps never restart on new writes.
            try source.execute("BEGIN")
            _ = try source.integer("SELECT count(*) FROM (SELECT 1 FROM nodes LIMIT 1)")
            defer { try? source.execute("COMMIT") }
            let target = try SQLiteConnection(path: partial, create: true)
            defer { target.close() }
            guard let backup = sqlite3_backup_init(target.pointer, "main", source.pointer, "main") else {
                throw SQLiteError(code: SQLiteResultCode(rawValue: sqlite3_errcode(target.pointer)), message: String(cString: sqlite3_errmsg(target.pointer)), context: "sqlite3_backup_init")
            }
            var code: Int32 = SQLITE_OK
            repeat {
                // 4,096 pages (16 MB) per step: progress a few times a second on a slow disk.
                code = sqlite3_backup_step(backup, 4096)
                let total = Int(sqlite3_backup_pagecount(backup))
                progress?(LoadProgress(done: total - Int(sqlite3_backup_remaining(backup)), total: total))
            } while code == SQLITE_OK || code == SQLITE_BUSY || code == SQLITE_LOCKED
            // backup_finish returns the error of the failed step, if any.
            try target.check(sqlite3_backup_finish(backup), "backing up \(path) to \(partial)")
            if code != SQLITE_DONE { try target.check(code, "backing up \(path) to \(partial)") }
            _ = try target.text("PRAGMA journal_mode = DELETE")  // a standalone file, no -wal beside it
        } catch let error as SQLiteError {
            unlink(partial)
            throw Self.storageError(error, path: partial)
        } catch {
            unlink(partial)
            throw StorageError(.io, "\(error)")
        }
        if rename(partial, destination) != 0 {
            let code = errno
            unlink(partial)
            throw Self.fileSystemError(code, doing: "move the backup into place at \(destination)")
        }
    }

    /// Size of the database file and its WAL in bytes, for write-amplification figures.
    public var fileByteCount: Int {
        var total = 0
        for suffix in ["", "-wal"] {
            var status = stat()
            if stat(path + suffix, &status) == 0 { total += Int(status.st_size) }
        }
        return total
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

/// Builds a `Node` from records in encoded-path order with a stack of open inner nodes.
struct TreeBuilder {
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

    mutating func add(_ statement: SQLiteStatement) throws(StorageError) {
        let path = statement.bytes(0)
        // Fast path, most rows: a leaf directly below the innermost open node (the previous row's
        // parent). One prefix comparison and one scan of the last key; no segment list, no frame walk.
        let openCount = open.count
        if path.count > openCount + 1, path[path.count - 1] == SQLiteSchema.separator,
            statement.type(1) != .null,
            open.withUnsafeBufferPointer({ openBytes in
                openCount == 0 || memcmp(openBytes.baseAddress!, path.baseAddress!, openCount) == 0
            })
        {
            let last = UnsafeBufferPointer(rebasing: path[openCount..<(path.count - 1)])
            if memchr(last.baseAddress!, Int32(SQLiteSchema.separator), last.count) == nil {
                let priority = try self.priority(statement)
                let node = try leaf(statement)
                try appendChild(last, priority == nil ? node : node.withPriority(priority))
                return
            }
        }
        try addSlowly(statement, path)
    }

    private func priority(_ statement: SQLiteStatement) throws(StorageError) -> Priority? {
        switch statement.type(2) {
        case .null: return nil
        case .integer, .float: return .number(statement.double(2))
        case .text: return .string(statement.text(2))
        case .blob: throw corrupt("a priority stored as a blob")
        }
    }

    private mutating func push(_ frame: Frame) {
        open.append(contentsOf: frame.keyBytes)
        open.append(SQLiteSchema.separator)
        frames.append(frame)
        if children.count < frames.count { children.append(ChildBuffer()) }
    }

    private mutating func addSlowly(_ statement: SQLiteStatement, _ path: UnsafeBufferPointer<UInt8>) throws(StorageError) {
        segments.removeAll(keepingCapacity: true)
        var start = 0
        for index in 0..<path.count where path[index] == SQLiteSchema.separator {
            segments.append(start..<index)
            start = index + 1
        }
        guard start == path.count else { throw corrupt("a path that does not end with its separator") }

        var common = 0
        while common < frames.count - 1, common < segments.count,
            frames[common + 1].keyBytes.elementsEqual(path[segments[common]])
        {
            common += 1
        }
        while frames.count - 1 > common { try closeTop() }

        let priority = try self.priority(statement)
        if segments.isEmpty {  // the root's own record
            if statement.type(1) == .null { frames[0].priority = priority } else { rootLeaf = try leaf(statement).withPriority(priority) }
            return
        }
        if common == segments.count { throw corrupt("a record after its own children") }
        for index in common..<(segments.count - 1) {
            let bytes = Array(path[segments[index]])
            push(Frame(keyBytes: bytes, key: ChildKey(String(decoding: bytes, as: UTF8.self))))
        }
        let lastBytes = path[segments[segments.count - 1]]
        if statement.type(1) == .null {
            let bytes = Array(lastBytes)
            push(Frame(keyBytes: bytes, key: ChildKey(String(decoding: bytes, as: UTF8.self)), priority: priority))
        } else {
            try appendChild(UnsafeBufferPointer(rebasing: lastBytes), try leaf(statement).withPriority(priority))
        }
    }

    private func leaf(_ statement: SQLiteStatement) throws(StorageError) -> Node {
        switch statement.type(1) {
        case .integer: return Node(statement.int64(1))
        case .float: return Node(statement.double(1))
        case .text: return Node(statement.text(1))
        case .blob:
            let bytes = statement.bytes(1)
            guard bytes.count == 1, bytes[0] <= 1 else { throw corrupt("a blob that is not a boolean") }
            return Node(bytes[0] == 1)
        case .null: preconditionFailure("markers are handled by the caller")
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
            throw corrupt("both a value and children at key '\(key.string)'")
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

    mutating func finish() throws(StorageError) -> Node {
        while frames.count > 1 { try closeTop() }
        if let rootLeaf {
            guard children[0].count == 0 else { throw corrupt("both a value and children at the root") }
            return rootLeaf
        }
        return makeNode(frames[0], children[0])
    }

    private func corrupt(_ what: String) -> StorageError {
        StorageError(.corrupt, "the database holds \(what), which Hearth never writes. Restore the latest backup, or export and re-import the data.")
    }
}
