import HearthSQL
import HearthCore
import HearthStorage
import Foundation

/// The SQLite engine's side of its storage thread (``GroupCommitThread``): the writer connection, the
/// write log and its policy, and how a group of batches becomes one transaction. Used on the storage
/// thread alone, which it is handed to.
final class SQLiteCommitter: GroupCommitter {
    let path: String
    private let connection: SQLiteConnection
    /// Prepared on first use; dropped before exclusive work (they would keep schema locks across a VACUUM).
    private var statements: SQLiteStorageEngine.Statements?
    /// How much is logged and not yet in `nodes` (see `WriteLog`).
    private var log: WriteLog
    /// The encoding of the group being committed, reused.
    private var encodedGroup: [UInt8] = []
    /// Whether the next commit goes through the log.
    private var policy: WriteLogPolicy
    /// The change feed: each commit's records, in its transaction.
    private var feed: FeedTable
    /// The IDs of applied writes: each commit's, in its transaction.
    private var appliedWrites: AppliedWriteTable
    /// Whether closing folds the log (see `finish`).
    private let foldsOnClose: Bool
    /// The writer's checkpoints (run by its WAL hook inside each commit), and where they are reported.
    private let checkpoints: WALCheckpoints
    private let report: CheckpointReport
    private var reported = CheckpointFailures()

    init(
        path: String, connection: SQLiteConnection, log: WriteLog, feed: FeedTable, appliedWrites: AppliedWriteTable,
        policy: WriteLogPolicy, checkpoints report: CheckpointReport = CheckpointReport(), foldsOnClose: Bool = true
    ) {
        self.foldsOnClose = foldsOnClose
        self.report = report
        checkpoints = connection.checkpointAutomatically(atFrames: SQLiteStorageEngine.checkpointFrames)
        self.path = path
        self.connection = connection
        self.log = log
        self.feed = feed
        self.appliedWrites = appliedWrites
        self.policy = policy
    }

    func commit(_ batches: [WriteBatch]) -> Result<Void, StorageError> {
        do {
            if statements == nil { statements = try SQLiteStorageEngine.Statements(connection) }
            guard let statements else { preconditionFailure("prepared just above") }
            try commit(batches, statements: statements)
            return .success(())
        } catch {
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            return .failure(SQLiteStorageEngine.storageError(error, path: path))
        }
    }

    func prepareForExclusiveWork() { statements = nil }

    func finish() {
        statements = nil
        // A clean close leaves `nodes` complete and the log empty. If this fails, the next open reads the
        // log instead. An engine that only reads beside the server's (a scheduled backup) leaves the log
        // to the server: a whole fold would hold the server's writers for its length.
        if foldsOnClose { try? foldLog() }
        connection.close()
    }

    /// Runs `body` with the writer connection. The write log is folded first, so `body` sees every commit
    /// in `nodes`; except with `replacingAll`, whose `body` deletes the records and the log itself (an
    /// import discards the log, so an undecodable row cannot stop it, and rows another engine logged
    /// meanwhile go too).
    /// With `folding` false the log stays as it is (work that reads or writes only the change feed's own
    /// tables, such as its location index, needs no fold and should not pay for one).
    func withConnection<T>(replacingAll: Bool, folding: Bool = true, _ body: (SQLiteConnection) throws -> T) throws(StorageError) -> T {
        do {
            if !replacingAll && folding { try foldLog() }
            let value = try body(connection)
            if replacingAll {
                log.cleared()
                feed.cleared()
            }
            return value
        } catch let error as SQLiteError {
            throw SQLiteStorageEngine.storageError(error, path: path)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.io, "\(error)")
        }
    }

    /// Commits `batches` in one transaction as one more `log` row; once the log holds its fold size, the
    /// same transaction also folds the log's oldest chunk into `nodes`. While the policy says the log does
    /// not pay (`WriteLogPolicy`), and for a group whose encoding alone reaches the fold size (a large
    /// set), the group goes to `nodes` directly, after whatever is left of the log.
    private func commit(_ batches: [WriteBatch], statements: SQLiteStorageEngine.Statements) throws(SQLiteError) {
        let writer = connection
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
            // The log keeps its batches in memory until they are folded; their feed entries are in this
            // commit's feed row already, and dropping them here frees them while they are in cache
            // (storage.write.feed: 1–2 % of durable writes, docs/BENCHMARKS.md).
            let kept = batches.contains { $0.feed != nil } ? batches.map(\.withoutFeed) : batches
            let appended = WriteLog.Row(sequence: writer.lastInsertRowID, batches: kept, byteCount: encodedGroup.count)
            log.willAppend(sequence: appended.sequence)
            if draining || log.byteCount + appended.byteCount >= log.foldByteCount {
                // The new row is not in `rows` yet: if the chunk reaches it, it is read back.
                fold = try log.fold(writer, into: &records, atLeast: log.foldChunkByteCount)
            }
            row = appended
        }
        try feed.append(batches[...], now: Self.milliseconds(), statements: statements)
        try appliedWrites.append(batches[...], statements: statements)
        try writer.execute("COMMIT")
        reportCheckpoints()
        if let row, fold.through.map({ $0 < row.sequence }) ?? true { log.appended(row) }
        log.folded(fold)
        if policy.measures {
            policy.committed(operations: batches.reduce(0) { $0 + $1.operations.count }, pages: writer.pagesWritten - pagesBefore)
        }
        // One large write (a 10 MB set) should not keep its buffer for the life of the engine.
        if encodedGroup.capacity > 4 << 20 { encodedGroup = [] }
    }

    /// Publishes how the checkpoints a commit ran went, when that changed.
    private func reportCheckpoints() {
        let now = CheckpointFailures(count: checkpoints.failures, failing: checkpoints.failing)
        guard now != reported else { return }
        reported = now
        report.publish(now)
    }

    /// The wall clock in milliseconds, for the feed's retention.
    private static func milliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Applies the whole log to `nodes` and empties it, in one transaction: before work that reads or
    /// replaces `nodes` on the writer (import, compact) and at close.
    private func foldLog() throws(SQLiteError) {
        let writer = connection
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
}

extension GroupCommitThread where Committer == SQLiteCommitter {
    /// Runs `body` on the storage thread with the writer connection, between commits, and waits for it
    /// (``SQLiteCommitter/withConnection(replacingAll:_:)``).
    func exclusive<T>(replacingAll: Bool = false, folding: Bool = true, _ body: @escaping (SQLiteConnection) throws -> T) throws(StorageError) -> T {
        try exclusive { (committer: SQLiteCommitter) throws(StorageError) -> T in
            try committer.withConnection(replacingAll: replacingAll, folding: folding, body)
        }
    }
}
