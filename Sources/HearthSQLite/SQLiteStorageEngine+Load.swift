import HearthSQL
public import HearthCore
public import HearthStorage
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
            var builder = RecordTreeBuilder()
            var count = 0
            while try statement.step() {
                let priority = try statement.recordPriority()
                try builder.add(path: statement.bytes(0), leaf: try statement.recordLeaf(), priority: priority)
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

    /// The IDs of the newest writes committed with one, oldest first (`AppliedWriteTable`), read on a
    /// reader connection of its own.
    public func rememberedWriteIDs() throws(StorageError) -> [String] {
        do throws(SQLiteError) {
            let reader = try SQLiteConnection(path: path, create: false)
            defer { reader.close() }
            try Self.configure(reader)
            return try AppliedWriteTable.read(reader)
        } catch {
            throw Self.storageError(error, path: path)
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
        do throws(SQLiteError) {
            let source = try SQLiteConnection(path: path, create: false)
            defer { source.close() }
            try Self.configure(source)
            // Holding a read transaction pins one WAL snapshot, so steps never restart on new writes.
            try source.execute("BEGIN")
            _ = try source.integer("SELECT count(*) FROM (SELECT 1 FROM nodes LIMIT 1)")
            defer { try? source.execute("COMMIT") }
            let target = try SQLiteConnection(path: partial, create: true)
            defer { target.close() }
            // 4,096 pages (16 MB) per step: progress a few times a second on a slow disk.
            try source.backup(into: target, pagesPerStep: 4096) { done, total in progress?(LoadProgress(done: done, total: total)) }
            _ = try target.text("PRAGMA journal_mode = DELETE")  // a standalone file, no -wal beside it
        } catch {
            unlink(partial)
            throw Self.storageError(error, path: partial)
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

extension SQLiteStatement {
    /// The leaf a `nodes` row holds, or nil for an inner node's priority marker (`value` NULL).
    func recordLeaf() throws(StorageError) -> Node? {
        switch type(1) {
        case .null: return nil
        case .integer: return Node(int64(1))
        case .float:
            // Node(Double) stops the process on infinity; SQLite stores one that was written as 1e999.
            let value = double(1)
            guard value.isFinite else { throw .corruptRecords("a number that is not finite") }
            return Node(value)
        case .text: return Node(text(1))
        case .blob:
            let bytes = bytes(1)
            guard bytes.count == 1, bytes[0] <= 1 else { throw .corruptRecords("a blob that is not a boolean") }
            return Node(bytes[0] == 1)
        }
    }

    /// The priority a `nodes` row holds.
    func recordPriority() throws(StorageError) -> Priority? {
        switch type(2) {
        case .null: return nil
        case .integer, .float:
            let value = double(2)
            guard value.isFinite else { throw .corruptRecords("a priority that is not finite") }
            return .number(value)
        case .text: return .string(text(2))
        case .blob: throw .corruptRecords("a priority stored as a blob")
        }
    }
}
