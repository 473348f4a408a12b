import HearthCore
import HearthStorage
internal import CSQLite
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

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
