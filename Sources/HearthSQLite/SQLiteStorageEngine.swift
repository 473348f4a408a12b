import HearthSQL
public import HearthCore
public import HearthStorage
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// The durable engine: one SQLite file per namespace (`<data>/<namespace>.sqlite`), in WAL mode, written
/// by one storage thread that commits many batches per transaction (group commit) and acknowledges each
/// only after the commit's fsync.
///
///     let engine = try SQLiteStorageEngine(directory: "hearth-data", namespace: "demo")
///     let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
///
/// Threads: the writer connection belongs to the storage thread alone (`SQLiteCommitter`, run by HearthStorage's `GroupCommitThread`);
/// completions run on a serial completion queue, so the storage thread starts the next commit while
/// writers hear about the last one. `load`, `backup` and `exportJSON` open their own short-lived reader
/// connections, which WAL lets run beside the writer. An engine dropped without `close()` closes itself
/// (its threads hold only the writer's state, not the engine).
public final class SQLiteStorageEngine: StorageEngine, @unchecked Sendable {
    /// The namespace's file.
    public let path: String
    public var location: String { "SQLite \(path)" }

    /// Most batches one transaction commits. A bound so that one commit (and its completions) cannot
    /// grow without limit while writers keep appending; at 100-byte writes this is ~1 MB of WAL per
    /// fsync, past the point where larger groups stop paying off.
    static let batchesPerCommitMax = 8192

    /// Write log size from which each logging commit also folds the log's oldest eighth into the records
    /// (1 MiB: ~8,000 writes of 100 bytes; docs/storage.md has the sizes tried).
    public static let defaultLogFoldByteCount = 1 << 20

    /// Whether commits go through the write log: chosen as the engine runs from the pages commits write
    /// (`.adaptive`, the default; docs/storage.md), always (tests of the log), or never.
    public typealias WriteLogChoice = WriteLogPolicyChoice

    /// When `init` runs `PRAGMA quick_check` over the whole file.
    public enum Verification: Sendable {
        /// On every open of an existing file.
        case always
        /// Only when the file was not closed cleanly (its `-wal` file is there, see ``wasClosedCleanly``).
        case afterUncleanShutdown
        /// Never (tests, benchmarks).
        case never
    }

    /// Commits made and batches they carried: how well group commit is grouping.
    public typealias Statistics = GroupCommitStatistics

    /// A snapshot of ``Statistics``.
    public var commitStatistics: Statistics { writer.statistics }

    /// True when `init` ran `PRAGMA quick_check` (the file had not been closed cleanly, or `.always`).
    public let checkedIntegrity: Bool

    /// Internal for tests: a dropped engine's storage thread must end and free this.
    let writer: GroupCommitThread<SQLiteCommitter>
    /// Reads the change feed on its own connection and queue, beside the writer (WAL).
    private let feedReader: FeedReader
    /// The feed indexed by location, for histories (built when first asked for).
    private let feedLocations: FeedLocationIndex<SQLiteFeedLocationStore>
    public let feedBeforeBytesMax: Int
    /// What the storage thread last saw of its checkpoints (``StorageEngine/checkpointFailures``).
    private let checkpoints: CheckpointReport

    public var checkpointFailures: CheckpointFailures { checkpoints.value }

    /// Opens (or, with `create`, creates) the namespace's database, checks it with `PRAGMA quick_check`
    /// when `verify` asks for it, and starts the storage thread. `logFoldByteCount` is the write log's size
    /// at which a commit folds it into the records (docs/storage.md); tests set it small. `foldsOnClose`
    /// false leaves the log as it is at close: for an engine that only reads beside a server's.
    ///
    /// - Throws: ``StorageError`` naming the file or directory and what to do: `.notFound`, `.readOnly`,
    ///   `.corrupt`, `.diskFull`, `.busy`.
    public init(
        directory: String, namespace: String, create: Bool = true, verify: Verification = .afterUncleanShutdown,
        logFoldByteCount: Int = defaultLogFoldByteCount, writeLog: WriteLogChoice = .adaptive,
        feedRetention: ChangeFeedRetention = .standard, foldsOnClose: Bool = true
    ) throws(StorageError) {
        path = try SQLiteStorageEngine.databasePath(directory: directory, namespace: namespace, create: create)
        feedBeforeBytesMax = feedRetention.beforeBytesMax
        let check: Bool
        switch verify {
        case .always: check = true
        case .afterUncleanShutdown: check = !Self.wasClosedCleanly(path: path)
        case .never: check = false
        }
        let existed = access(path, F_OK) == 0
        let connection = try SQLiteStorageEngine.openChecked(path: path, create: create, verify: check)
        checkedIntegrity = check && existed
        let log: WriteLog
        let feed: FeedTable
        let appliedWrites: AppliedWriteTable
        do {
            log = try WriteLog(reading: connection, foldByteCount: logFoldByteCount)
            feed = try FeedTable(reading: connection, retention: feedRetention)
            appliedWrites = try AppliedWriteTable(reading: connection)
        } catch {
            connection.close()
            throw Self.storageError(error, path: path)
        }
        checkpoints = CheckpointReport()
        writer = GroupCommitThread(
            committer: SQLiteCommitter(
                path: path, connection: connection, log: log, feed: feed, appliedWrites: appliedWrites, policy: WriteLogPolicy(writeLog),
                checkpoints: checkpoints, foldsOnClose: foldsOnClose),
            location: path, batchesPerCommitMax: Self.batchesPerCommitMax)
        feedReader = FeedReader(path: path)
        feedLocations = FeedLocationIndex(SQLiteFeedLocationStore(writer: writer, reader: feedReader))
    }

    deinit { writer.close() }

    /// Whether the database at `path` was last closed cleanly: its `-wal` file is absent. SQLite deletes
    /// the WAL only when the last connection closes after a complete checkpoint into the database file
    /// (sqlite3WalClose); a crash, a kill or a power cut while any connection was open leaves it, and so
    /// does another process that has the file open now. A missing database counts as clean.
    public static func wasClosedCleanly(path: String) -> Bool {
        access(path + "-wal", F_OK) != 0
    }

    // MARK: Opening

    /// `<directory>/<namespace>.sqlite`, after checking the namespace and the directory.
    static func databasePath(directory: String, namespace: String, create: Bool) throws(StorageError) -> String {
        guard NamespaceName.isValid(namespace) else {
            throw StorageError(
                .invalidData,
                "'\(namespace)' is not a valid namespace name: use 1–63 letters, digits or hyphens (like a Firebase database name).")
        }
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + namespace + ".sqlite"
        var status = stat()
        if stat(directory, &status) != 0 {
            guard create else {
                throw StorageError(.notFound, "the data directory \(directory) does not exist. Pass --data with the directory that holds your .sqlite files.")
            }
            let code = OwnerOnlyFiles.createDirectory(directory)
            if code != 0 { throw fileSystemError(code, doing: "create the data directory \(directory)") }
        } else if (status.st_mode & S_IFMT) != S_IFDIR {
            throw StorageError(.notFound, "\(directory) is not a directory. Point --data at a directory for Hearth's data.")
        }
        if !create && access(path, F_OK) != 0 {
            throw StorageError(.notFound, "no database for namespace '\(namespace)' in \(directory) (expected \(path)). Check the namespace and --data.")
        }
        // WAL mode creates <file>-wal and <file>-shm beside the database, so even reading needs a writable directory.
        if access(directory, W_OK) != 0 {
            throw fileSystemError(errno, doing: "write to the data directory \(directory)")
        }
        if access(path, F_OK) == 0 && access(path, W_OK) != 0 {
            throw fileSystemError(errno, doing: "write to \(path)")
        }
        return path
    }

    static func fileSystemError(_ code: Int32, doing what: String) -> StorageError {
        let reason = String(cString: strerror(code))
        switch code {
        case EACCES, EPERM:
            return StorageError(.readOnly, "cannot \(what): \(reason). Give the user running hearth write access, or choose another directory with --data.")
        case EROFS:
            return StorageError(.readOnly, "cannot \(what): the file system is read-only. Remount it read-write or choose another directory with --data.")
        case ENOSPC, EDQUOT:
            return StorageError(.diskFull, "cannot \(what): the disk is full. Free some space and retry.")
        case ENOENT:
            return StorageError(.notFound, "cannot \(what): a parent directory does not exist. Create it or choose another directory with --data.")
        default:
            return StorageError(.io, "cannot \(what): \(reason).")
        }
    }

    /// Opens a connection with Hearth's settings and layout, checking the file first.
    static func openChecked(path: String, create: Bool, verify: Bool) throws(StorageError) -> SQLiteConnection {
        let existed = access(path, F_OK) == 0
        // Owner-only (see OwnerOnlyFiles): a new file is created 0600 before SQLite opens it, and files
        // written by versions that made them 0644 are tightened.
        if create && !existed {
            let code = OwnerOnlyFiles.createFile(path)
            if code != 0 { throw fileSystemError(code, doing: "create \(path)") }
        }
        OwnerOnlyFiles.tighten(OwnerOnlyFiles.databaseFiles(path))
        do {
            let connection = try SQLiteConnection(path: path, create: create)
            try configure(connection)
            if existed && verify {
                let result = try connection.text("PRAGMA quick_check(1)") ?? "no result"
                if result != "ok" {
                    throw SQLiteError(code: .corrupt, message: result, context: "PRAGMA quick_check")
                }
            }
            let applicationID = try connection.integer("PRAGMA application_id")
            if applicationID != 0 && applicationID != Int64(SQLiteSchema.applicationID) {
                throw StorageError(.corrupt, "\(path) is a SQLite database, but not one of Hearth's (application_id \(applicationID)). Move it away or choose another namespace.")
            }
            let version = try connection.integer("PRAGMA user_version")
            if version > SQLiteSchema.version {
                throw StorageError(.corrupt, "\(path) was written by a newer Hearth (layout \(version); this build reads up to \(SQLiteSchema.version)). Upgrade hearth.")
            }
            if version < SQLiteSchema.version {
                // A new file gets the whole layout; an older one what it lacks (the write log, the feed).
                try connection.execute("BEGIN IMMEDIATE")
                if version == 0 { try connection.execute(SQLiteSchema.create) }
                if version == 1 { try connection.execute(SQLiteSchema.createLog) }
                if version >= 1 && version < 3 { try connection.execute(FeedTable.create) }
                if version >= 1 { try connection.execute(AppliedWriteTable.create) }
                try connection.execute("PRAGMA application_id = \(SQLiteSchema.applicationID)")
                try connection.execute("PRAGMA user_version = \(SQLiteSchema.version)")
                try connection.execute("COMMIT")
            }
            return connection
        } catch let error as SQLiteError {
            throw storageError(error, path: path)
        } catch let error as StorageError {
            throw error
        } catch {
            preconditionFailure("unexpected error \(error)")
        }
    }

    /// WAL frames (pages) at which a commit checkpoints.
    static let checkpointFrames: Int32 = 4000

    /// Every pragma Hearth sets, in one place (https://sqlite.org/pragma.html).
    static func configure(_ connection: SQLiteConnection) throws(SQLiteError) {
        // Busy handling: readers never block the writer in WAL mode, but a checkpoint, an import or
        // another process's write (the sqlite3 shell) can hold the write lock. Wait up to 5 s, which
        // outlasts any commit Hearth makes, then fail with SQLITE_BUSY, reported as "another process is
        // using the file" rather than retried forever.
        try connection.execute("PRAGMA busy_timeout = 5000")
        // WAL: a commit appends to one file and fsyncs it once; readers (load, export, backup) see a
        // snapshot and never block the writer (https://sqlite.org/wal.html).
        let mode = try connection.text("PRAGMA journal_mode = WAL")
        if mode?.lowercased() != "wal" {
            throw SQLiteError(code: .error, message: "journal_mode is \(mode ?? "unknown"), not wal", context: "PRAGMA journal_mode")
        }
        // FULL: in WAL mode, NORMAL syncs only at checkpoints, so a power cut can lose commits that were
        // acknowledged. FULL fsyncs the WAL at every commit; group commit pays that once for many writes.
        try connection.execute("PRAGMA synchronous = FULL")
        // Checkpoint every 4,000 pages (16 MB of WAL) instead of 1,000: pages rewritten between
        // checkpoints are copied to the database once, which lowers write amplification under load.
        // (The writer runs its checkpoints itself at the same size, to see them fail: SQLiteCommitter.)
        try connection.execute("PRAGMA wal_autocheckpoint = \(checkpointFrames)")
        // After a checkpoint, truncate a WAL that grew past 64 MB (after an import) back to that size.
        try connection.execute("PRAGMA journal_size_limit = 67108864")
        // 64 MiB page cache: the upper levels of the path B-tree of a 1M-leaf database stay in memory.
        try connection.execute("PRAGMA cache_size = -65536")
        // Sorts and temporary indexes (VACUUM) in memory, never in a file in /tmp.
        try connection.execute("PRAGMA temp_store = MEMORY")
        // No mmap: an I/O error in a mapped file is a SIGBUS, not an error code Hearth can report.
        try connection.execute("PRAGMA mmap_size = 0")
    }

    /// A SQLite failure as an error an operator can act on, naming the file.
    static func storageError(_ error: SQLiteError, path: String) -> StorageError {
        switch error.code {
        case .full:
            return StorageError(.diskFull, "the disk holding \(path) is full (\(error.message)). Free some space and retry; nothing from the failed write was stored.")
        case .readOnly, .permission:
            return StorageError(.readOnly, "cannot write \(path) (\(error.message)). Check the file's and directory's permissions and that the file system is mounted read-write.")
        case .cannotOpen:
            return StorageError(.notFound, "cannot open \(path) (\(error.message)). Check that the data directory exists and is writable.")
        case .corrupt, .notADatabase:
            return StorageError(
                .corrupt,
                "the database file \(path) is corrupted (\(error.message)). Stop hearth, move the file aside, and restore the latest backup (made by 'hearth backup'); 'sqlite3 \(path) .recover' can salvage what is readable.")
        case .busy, .locked:
            return StorageError(.busy, "\(path) is locked by another process for more than 5 s (\(error.message)). Stop the other process (another hearth, a sqlite3 shell) and retry.")
        case .ioError:
            // The whole error: what SQLite was doing and the extended code (SQLITE_IOERR_FSYNC, _SHORT_READ…).
            return StorageError(.io, "an I/O error on \(path) (\(error)). Check the disk (dmesg) and the file system; nothing from the failed write was stored.")
        default:
            return StorageError(.io, "SQLite failed on \(path): \(error).")
        }
    }

    // MARK: Appending, import, compact, close

    public func append(_ batch: WriteBatch, completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        writer.append(batch, completion: completion)
    }

    public func replaceAll(with root: Node, progress: ((LoadProgress) -> Void)?) throws(StorageError) {
        let total = root.leafCount
        try writer.exclusive(replacingAll: true) { connection in
            try connection.replaceAll { statements in
                var writer = RecordWriter(statements: statements)
                writer.progress = progress.map { report in { done in report(LoadProgress(done: done, total: total)) } }
                try writer.apply(.put(.root, root))
            }
        }
        progress?(LoadProgress(done: total, total: total))
    }

    /// Replaces everything stored with the records `write` produces, in one transaction (all or
    /// nothing), on the writer connection: an import that streams records instead of building a tree.
    func replaceAll(streaming write: @escaping (inout RecordWriter) throws -> Void) throws(StorageError) {
        try writer.exclusive(replacingAll: true) { connection in
            try connection.replaceAll { statements in
                var writer = RecordWriter(statements: statements)
                try write(&writer)
            }
        }
    }

    public func compact() throws(StorageError) {
        try writer.exclusive { connection in
            try connection.execute("VACUUM")
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Runs SQL on the writer connection between commits (tests: `PRAGMA max_page_count` to simulate a
    /// full disk).
    func executeOnWriter(_ sql: String) throws(StorageError) {
        try writer.exclusive { connection in try connection.execute(sql) }
    }

    /// Waits for queued batches and their completions, then closes the writer connection. Called from a
    /// completion, it closes without waiting.
    public func close() {
        writer.close()
        feedLocations.waitForBuild()
        feedReader.close()
    }

    // MARK: The change feed

    public func readFeed(after position: Int64, limit: Int, completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void) {
        feedReader.read(after: position, limit: limit, completion: completion)
    }

    public func feedLocations(
        of location: Path, before: Int64, limit: Int, completion: @escaping @Sendable (Result<FeedLocationCandidates?, StorageError>) -> Void
    ) {
        feedLocations.candidates(of: location, before: before, limit: limit, completion: completion)
    }
}

extension SQLiteConnection {
    /// `DELETE FROM nodes` and `DELETE FROM log`, then `body`'s inserts, in one transaction; then folds
    /// the WAL into the database rather than leaving it for the next write.
    func replaceAll(_ body: (SQLiteStorageEngine.Statements) throws -> Void) throws {
        let statements = try SQLiteStorageEngine.Statements(self)
        try execute("BEGIN IMMEDIATE")
        do {
            try statements.deleteAll.run()
            try statements.clearLog.run()
            try FeedTable.clear(self)
            try body(statements)
            try execute("COMMIT")
        } catch {
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
        // The import is committed; a checkpoint that cannot run now (a reader holds the WAL) runs later.
        try? execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}

extension SQLiteStorageEngine {
    /// The writer's prepared statements, reused by every commit.
    final class Statements {
        let insert, deleteOne, deleteRange, deleteAll, appendLog, selectLog, deleteLogThrough, clearLog: SQLiteStatement
        /// The change feed's (`FeedTable`).
        let appendFeed, selectFeedSizes, deleteFeedThrough, setFeedTrimmed: SQLiteStatement
        /// The applied write IDs' (`AppliedWriteTable`).
        let appendWriteID, trimWriteIDs: SQLiteStatement
        init(_ connection: SQLiteConnection) throws(SQLiteError) {
            insert = try connection.prepare("INSERT OR REPLACE INTO nodes(path, value, priority) VALUES (?1, ?2, ?3)")
            deleteOne = try connection.prepare("DELETE FROM nodes WHERE path = ?1")
            deleteRange = try connection.prepare("DELETE FROM nodes WHERE path >= ?1 AND path < ?2")
            deleteAll = try connection.prepare("DELETE FROM nodes")
            appendLog = try connection.prepare("INSERT INTO log(operations) VALUES (?1)")
            selectLog = try connection.prepare("SELECT sequence, operations FROM log WHERE sequence > ?1 ORDER BY sequence")
            deleteLogThrough = try connection.prepare("DELETE FROM log WHERE sequence <= ?1")
            clearLog = try connection.prepare("DELETE FROM log")
            appendFeed = try connection.prepare("INSERT INTO feed(time, count, entries) VALUES (?1, ?2, ?3)")
            selectFeedSizes = try connection.prepare("SELECT number, time, count, length(entries) FROM feed ORDER BY number")
            deleteFeedThrough = try connection.prepare("DELETE FROM feed WHERE number <= ?1")
            setFeedTrimmed = try connection.prepare("INSERT OR REPLACE INTO feed_trimmed(id, through) VALUES (1, ?1)")
            appendWriteID = try connection.prepare("INSERT INTO applied_writes(id) VALUES (?1)")
            trimWriteIDs = try connection.prepare(
                "DELETE FROM applied_writes WHERE sequence <= (SELECT sequence FROM applied_writes ORDER BY sequence DESC LIMIT 1 OFFSET ?1)")
        }
    }
}
