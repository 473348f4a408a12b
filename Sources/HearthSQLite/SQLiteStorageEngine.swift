public import HearthCore
public import HearthStorage
internal import CSQLite
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
/// Threads: the writer connection belongs to the storage thread alone (asserted in `assertOnStorageThread`);
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
    public struct Statistics: Sendable, Equatable {
        public var commits = 0
        public var batches = 0
        /// Batches per commit, in order (kept for the first 100,000 commits, for benchmarks).
        public var groupSizes: [Int] = []
    }

    /// A snapshot of ``Statistics``.
    public var commitStatistics: Statistics { writer.statistics }

    /// True when `init` ran `PRAGMA quick_check` (the file had not been closed cleanly, or `.always`).
    public let checkedIntegrity: Bool

    /// Internal for tests: a dropped engine's storage thread must end and free this.
    let writer: StorageThread

    /// Opens (or, with `create`, creates) the namespace's database, checks it with `PRAGMA quick_check`
    /// when `verify` asks for it, and starts the storage thread. `logFoldByteCount` is the write log's size
    /// at which a commit folds it into the records (docs/storage.md); tests set it small.
    ///
    /// - Throws: ``StorageError`` naming the file or directory and what to do: `.notFound`, `.readOnly`,
    ///   `.corrupt`, `.diskFull`, `.busy`.
    public init(
        directory: String, namespace: String, create: Bool = true, verify: Verification = .afterUncleanShutdown,
        logFoldByteCount: Int = defaultLogFoldByteCount, writeLog: WriteLogChoice = .adaptive
    ) throws(StorageError) {
        path = try SQLiteStorageEngine.databasePath(directory: directory, namespace: namespace, create: create)
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
        do {
            log = try WriteLog(reading: connection, foldByteCount: logFoldByteCount)
        } catch {
            connection.close()
            throw Self.storageError(error, path: path)
        }
        writer = StorageThread(path: path, connection: connection, log: log, policy: WriteLogPolicy(writeLog))
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
                // A new file gets the whole layout; a version-1 file gets the (empty) write log.
                try connection.execute("BEGIN IMMEDIATE")
                try connection.execute(version == 0 ? SQLiteSchema.create : SQLiteSchema.createLog)
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
        try connection.execute("PRAGMA wal_autocheckpoint = 4000")
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
    public func close() { writer.close() }
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
        init(_ connection: SQLiteConnection) throws(SQLiteError) {
            insert = try connection.prepare("INSERT OR REPLACE INTO nodes(path, value, priority) VALUES (?1, ?2, ?3)")
            deleteOne = try connection.prepare("DELETE FROM nodes WHERE path = ?1")
            deleteRange = try connection.prepare("DELETE FROM nodes WHERE path >= ?1 AND path < ?2")
            deleteAll = try connection.prepare("DELETE FROM nodes")
            appendLog = try connection.prepare("INSERT INTO log(operations) VALUES (?1)")
            selectLog = try connection.prepare("SELECT sequence, operations FROM log WHERE sequence > ?1 ORDER BY sequence")
            deleteLogThrough = try connection.prepare("DELETE FROM log WHERE sequence <= ?1")
            clearLog = try connection.prepare("DELETE FROM log")
        }
    }
}

/// The writer connection, its storage thread and the job queue: everything the thread needs, and
/// nothing that keeps the engine alive, so a dropped engine's `deinit` can end the thread.
///
/// The storage thread takes every queued batch (up to `batchesPerCommitMax`), commits them in one
/// transaction with one fsync, hands their completions to `completions` (a serial queue, so they run in
/// order) and goes straight on to the next group: writers' follow-up writes and the committed-tree
/// updates run beside the next commit instead of delaying it. The queue is protected by `condition`.
final class StorageThread: @unchecked Sendable {
    typealias Completion = @Sendable (Result<Void, StorageError>) -> Void

    private enum Job {
        case batch(sequence: Int, WriteBatch, Completion)
        /// Work that needs the writer connection (import, compact), run between commits.
        case exclusive((SQLiteConnection) -> Void)
    }

    let path: String
    // Protected by `condition`.
    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var jobsStart = 0
    private var closing = false
    private var appended = 0
    private var abortThrough = 0
    private var statisticsStorage = SQLiteStorageEngine.Statistics()
    /// Groups whose success completions are queued or running on `completions`.
    private var completionsRunning = 0
    /// The storage thread waits for jobs (an append must wake it) rather than for fuller groups.
    private var waitingForJobs = false
    /// The storage thread waits for `completionsRunning` to reach zero (see `fullerGroupWait`).
    private var waitingForCompletions = false

    /// How long the storage thread waits for a fuller group while the last group's completions still
    /// run: their writers may append their next writes then, and one commit of them all pays one fsync
    /// instead of two. Short, so a completion that does not lead to a write costs little latency.
    static let fullerGroupWait = 0.0003

    /// Completions, in commit order, off the storage thread.
    private let completions = DispatchQueue(label: "hearth.storage.completions")
    private static let completionsKey = DispatchSpecificKey<Bool>()
    /// Signalled by the storage thread when it has closed the writer connection.
    private let finished = DispatchSemaphore(value: 0)
    /// Set once by the storage thread before it touches the writer; read to assert and to avoid
    /// waiting for itself.
    nonisolated(unsafe) private var storageThread: pthread_t?

    // The storage thread's alone.
    /// How much is logged and not yet in `nodes` (see `WriteLog`).
    private var log: WriteLog
    /// The encoding of the group being committed, reused.
    private var encodedGroup: [UInt8] = []

    /// Whether the next commit goes through the log.
    private var policy: WriteLogPolicy

    init(path: String, connection: SQLiteConnection, log: WriteLog, policy: WriteLogPolicy) {
        self.path = path
        self.log = log
        self.policy = policy
        completions.setSpecific(key: Self.completionsKey, value: true)
        let thread = Thread { [self] in run(connection) }
        thread.name = "hearth.storage"
        thread.start()
    }

    var statistics: SQLiteStorageEngine.Statistics {
        condition.lock()
        defer { condition.unlock() }
        return statisticsStorage
    }

    private var isOnOwnThread: Bool {
        if DispatchQueue.getSpecific(key: Self.completionsKey) == true { return true }
        return storageThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    func append(_ batch: WriteBatch, completion: @escaping Completion) {
        condition.lock()
        if closing {
            condition.unlock()
            // Never call back on the caller's stack: callers append while holding their own locks.
            DispatchQueue.global().async { [path] in
                completion(.failure(StorageError(.closed, "the database \(path) is closed.")))
            }
            return
        }
        appended += 1
        jobs.append(.batch(sequence: appended, batch, completion))
        // While completions run, their end wakes the storage thread (or its short timed wait does):
        // one wake per group instead of two, and a wake costs several µs in a VM.
        if waitingForJobs && completionsRunning == 0 { condition.signal() }
        condition.unlock()
    }

    func close() {
        condition.lock()
        let wasClosing = closing
        closing = true
        condition.signal()
        condition.unlock()
        // From a completion or the storage thread itself, waiting would wait for ourselves.
        if !wasClosing && !isOnOwnThread {
            finished.wait()
            finished.signal()  // for a later close() racing this one
        }
    }

    private func assertOnStorageThread() {
        assert(storageThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false, "the writer connection is used off the storage thread")
    }

    private func run(_ writer: SQLiteConnection) {
        storageThread = pthread_self()
        var statements: SQLiteStorageEngine.Statements? = nil
        defer {
            statements = nil
            // A clean close leaves `nodes` complete and the log empty. If this fails, the next open
            // reads the log instead.
            try? foldLog(writer)
            writer.close()
            completions.sync {}  // every completion has run before close() returns
            finished.signal()
        }
        while true {
            condition.lock()
            waitingForJobs = true
            while jobsStart == jobs.count && !closing {
                if completionsRunning > 0 {
                    _ = condition.wait(until: Date(timeIntervalSinceNow: Self.fullerGroupWait))
                } else {
                    condition.wait()
                }
            }
            waitingForJobs = false
            if jobsStart == jobs.count {
                condition.unlock()
                return
            }
            if completionsRunning > 0 && !closing {
                // Writers hearing about the last commit append their next writes now: wait for them
                // (appends do not wake this wait; the completions' end, a close or the deadline do).
                let deadline = Date(timeIntervalSinceNow: Self.fullerGroupWait)
                waitingForCompletions = true
                while completionsRunning > 0 && !closing
                    && jobs.count - jobsStart < SQLiteStorageEngine.batchesPerCommitMax
                {
                    if !condition.wait(until: deadline) { break }
                }
                waitingForCompletions = false
            }
            var group: [(sequence: Int, batch: WriteBatch, completion: Completion)] = []
            var exclusive: ((SQLiteConnection) -> Void)?
            while jobsStart < jobs.count, group.count < SQLiteStorageEngine.batchesPerCommitMax {
                if case .batch(let sequence, let batch, let completion) = jobs[jobsStart] {
                    group.append((sequence, batch, completion))
                    jobsStart += 1
                } else if group.isEmpty, case .exclusive(let job) = jobs[jobsStart] {
                    exclusive = job
                    jobsStart += 1
                    break
                } else {
                    break
                }
            }
            if jobsStart == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                jobsStart = 0
            } else if jobsStart > 4096 {
                jobs.removeFirst(jobsStart)
                jobsStart = 0
            }
            let abortThrough = self.abortThrough
            condition.unlock()

            if let exclusive {
                statements = nil  // they would keep schema locks across a VACUUM
                exclusive(writer)
                continue
            }
            let aborted = group.prefix { $0.sequence <= abortThrough }
            if !aborted.isEmpty {
                let failure = StorageError(.abortedAfterFailure, "an earlier write to \(path) failed to commit, so this one, queued behind it, was not stored. Retry it.")
                let completionsToRun = aborted.map(\.completion)
                completions.async { for completion in completionsToRun { completion(.failure(failure)) } }
            }
            let toCommit = group.dropFirst(aborted.count)
            if toCommit.isEmpty { continue }
            do {
                if statements == nil { statements = try SQLiteStorageEngine.Statements(writer) }
                try commit(toCommit.lazy.map(\.batch), writer: writer, statements: statements!)
                condition.lock()
                statisticsStorage.commits += 1
                statisticsStorage.batches += toCommit.count
                if statisticsStorage.groupSizes.count < 100_000 { statisticsStorage.groupSizes.append(toCommit.count) }
                completionsRunning += 1
                condition.unlock()
                let completionsToRun = toCommit.map(\.completion)
                completions.async { [self] in
                    for completion in completionsToRun { completion(.success(())) }
                    condition.lock()
                    completionsRunning -= 1
                    if completionsRunning == 0 && (waitingForCompletions || waitingForJobs) { condition.signal() }
                    condition.unlock()
                }
            } catch {
                if writer.isInTransaction { try? writer.execute("ROLLBACK") }
                let storageError = SQLiteStorageEngine.storageError(error, path: path)
                let completionsToRun = toCommit.map(\.completion)
                // Wait until the writers have heard: everything appended until then was built on the
                // failed writes, so it fails too (see StorageEngine).
                completions.sync { for completion in completionsToRun { completion(.failure(storageError)) } }
                condition.lock()
                self.abortThrough = appended
                condition.unlock()
            }
        }
    }

    /// Commits `batches` in one transaction as one more `log` row; once the log holds its fold size, the
    /// same transaction also folds the log's oldest chunk into `nodes`. While the policy says the log does
    /// not pay (`WriteLogPolicy`), and for a group whose encoding alone reaches the fold size (a large
    /// set), the group goes to `nodes` directly, after whatever is left of the log.
    private func commit(
        _ batches: some Collection<WriteBatch>, writer: SQLiteConnection, statements: SQLiteStorageEngine.Statements
    ) throws(SQLiteError) {
        assertOnStorageThread()
        encodedGroup.removeAll(keepingCapacity: true)
        // After the policy turned the log off, commits still append while they fold it away a chunk at a
        // time: folding it whole in one commit held that commit's writers for up to ~100 ms.
        let draining = !policy.usesLog && log.byteCount > 0
        if policy.usesLog || draining { WriteBatch.encode(batches, into: &encodedGroup) }
        let direct = !(policy.usesLog || draining) || encodedGroup.count >= log.foldByteCount
        let pagesBefore = policy.measures ? writer.pagesWritten : 0
        try writer.execute("BEGIN IMMEDIATE")
        var records = RecordWriter(statements: statements)
        var fold = WriteLog.Fold()
        var row: WriteLog.Row?
        if direct {
            if log.byteCount > 0 { fold = try log.fold(writer, into: &records) }
            for batch in batches { try records.apply(batch) }
        } else {
            statements.appendLog.bind(1, blob: encodedGroup)
            try statements.appendLog.run()
            let appended = WriteLog.Row(sequence: writer.lastInsertRowID, batches: Array(batches), byteCount: encodedGroup.count)
            log.willAppend(sequence: appended.sequence)
            if draining || log.byteCount + appended.byteCount >= log.foldByteCount {
                // The new row is not in `rows` yet: if the chunk reaches it, it is read back.
                fold = try log.fold(writer, into: &records, atLeast: log.foldChunkByteCount)
            }
            row = appended
        }
        try writer.execute("COMMIT")
        if let row, fold.through.map({ $0 < row.sequence }) ?? true { log.appended(row) }
        log.folded(fold)
        if policy.measures {
            policy.committed(operations: batches.reduce(0) { $0 + $1.operations.count }, pages: writer.pagesWritten - pagesBefore)
        }
        // One large write (a 10 MB set) should not keep its buffer for the life of the engine.
        if encodedGroup.capacity > 4 << 20 { encodedGroup = [] }
    }

    /// Applies the whole log to `nodes` and empties it, in one transaction: before work that reads or
    /// replaces `nodes` on the writer (import, compact) and at close.
    private func foldLog(_ writer: SQLiteConnection) throws(SQLiteError) {
        assertOnStorageThread()
        guard log.byteCount > 0 else { return }
        let statements = try SQLiteStorageEngine.Statements(writer)
        try writer.execute("BEGIN IMMEDIATE")
        do {
            var records = RecordWriter(statements: statements)
            let fold = try log.fold(writer, into: &records)
            try writer.execute("COMMIT")
            log.folded(fold)
        } catch {
            if writer.isInTransaction { try? writer.execute("ROLLBACK") }
            throw error
        }
        log.byteCount = 0
    }

    /// Runs `body` on the storage thread with the writer connection and waits for it. The write log is
    /// folded first, so `body` sees every commit in `nodes`; except with `replacingAll`, whose `body`
    /// deletes the records and the log itself (an import discards the log, so an undecodable row cannot
    /// stop it, and rows another engine logged meanwhile go too).
    func exclusive<T>(replacingAll: Bool = false, _ body: @escaping (SQLiteConnection) throws -> T) throws(StorageError) -> T {
        nonisolated(unsafe) var result: Result<T, any Error>?
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        guard !closing else {
            condition.unlock()
            throw StorageError(.closed, "the database \(path) is closed.")
        }
        jobs.append(.exclusive({ [self] connection in
            assertOnStorageThread()
            result = Result {
                if !replacingAll { try foldLog(connection) }
                let value = try body(connection)
                if replacingAll { log.cleared() }
                return value
            }
            done.signal()
        }))
        condition.signal()
        condition.unlock()
        done.wait()
        switch result! {
        case .success(let value): return value
        case .failure(let error as SQLiteError): throw SQLiteStorageEngine.storageError(error, path: path)
        case .failure(let error as StorageError): throw error
        case .failure(let error): throw StorageError(.io, "\(error)")
        }
    }
}

/// Turns write operations into row changes, reusing one path buffer.
struct RecordWriter {
    let statements: SQLiteStorageEngine.Statements
    var path = EncodedPath()
    var written = 0
    var progress: ((Int) -> Void)?

    init(statements: SQLiteStorageEngine.Statements) { self.statements = statements }

    mutating func apply(_ batch: WriteBatch) throws(SQLiteError) {
        for operation in batch.operations { try apply(operation) }
    }

    mutating func apply(_ operation: WriteBatch.Operation) throws(SQLiteError) {
        switch operation {
        case .removeSubtree(let target):
            if target.isRoot {
                try statements.deleteAll.run()
                return
            }
            let encoded = EncodedPath(target)
            let end = encoded.subtreeEnd
            encoded.bytes.withUnsafeBufferPointer { statements.deleteRange.bind(1, text: $0) }
            end.withUnsafeBufferPointer { statements.deleteRange.bind(2, text: $0) }
            try statements.deleteRange.run()
        case .removeRecord(let target):
            bindPath(statements.deleteOne, EncodedPath(target).bytes)
            try statements.deleteOne.run()
        case .put(let target, let node):
            // The buffer is reused: one allocation per commit rather than one per row.
            path.bytes.removeAll(keepingCapacity: true)
            for key in target.keys { path.append(key) }
            try put(node)
        case .putPriority(let target, let priority):
            bindPath(statements.insert, EncodedPath(target).bytes)
            statements.insert.bindNull(2)
            bind(priority, to: statements.insert)
            try statements.insert.run()
        }
    }

    private func bindPath(_ statement: SQLiteStatement, _ bytes: [UInt8]) {
        if bytes.isEmpty {
            statement.bind(1, text: "")
        } else {
            bytes.withUnsafeBufferPointer { statement.bind(1, text: $0) }
        }
    }

    private func bind(_ priority: Priority?, to statement: SQLiteStatement) {
        switch priority {
        case nil: statement.bindNull(3)
        case .number(let value)?: statement.bind(3, double: value)
        case .string(let value)?: statement.bind(3, text: value)
        }
    }

    /// Writes `node`'s records at `path` (depth first, so rows arrive in key order).
    private mutating func put(_ node: Node) throws(SQLiteError) {
        let insert = statements.insert
        if let leaf = node.leafValue {
            bindPath(insert, path.bytes)
            switch leaf {
            case .bool(let value): insert.bind(2, blob: [value ? 1 : 0])
            case .integer(let value): insert.bind(2, int64: value)
            case .double(let value): insert.bind(2, double: value)
            case .string(let value): insert.bind(2, text: value)
            }
            bind(node.priority, to: insert)
            try insert.run()
            written += 1
            if written % 100_000 == 0 { progress?(written) }
            return
        }
        if let priority = node.priority {
            bindPath(insert, path.bytes)
            insert.bindNull(2)
            bind(priority, to: insert)
            try insert.run()
        }
        var failure: SQLiteError?
        node.children.forEach { key, child in
            let mark = path.bytes.count
            path.append(key)
            do throws(SQLiteError) { try put(child) } catch {
                failure = error
                return false
            }
            path.bytes.removeSubrange(mark...)
            return true
        }
        if let failure { throw failure }
    }
}
