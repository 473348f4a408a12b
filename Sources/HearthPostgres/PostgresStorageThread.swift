import Foundation
import HearthCore
import HearthStorage
#if canImport(Glibc)
    import Glibc
#endif

/// The queue of batches and the thread that commits them: every queued batch (up to
/// `batchesPerCommitMax`) goes into one transaction (group commit), completions run in order on a serial
/// queue off this thread, and work that needs the connection between commits (an import) runs here
/// too. Holds the writer, not the engine, so a dropped engine's `deinit` can end the thread. The queue
/// is protected by `condition`; `writer` belongs to the storage thread.
///
/// The ordering rule of ``StorageEngine``: after a failed commit, every batch appended before its
/// writers heard of the failure fails too (`abortThrough`), since those were built on the failed writes.
final class PostgresStorageThread: @unchecked Sendable {
    typealias Completion = @Sendable (Result<Void, StorageError>) -> Void

    private enum Job {
        case batch(sequence: Int, WriteBatch, Completion)
        /// Work that needs the writer (an import), run between commits.
        case exclusive((PostgresWriter) -> Void)
    }

    /// Most batches one transaction commits: a bound on one commit's size and its completions' burst.
    static let batchesPerCommitMax = 8192

    let location: String
    // Protected by `condition`.
    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var jobsStart = 0
    private var closing = false
    private var appended = 0
    private var abortThrough = 0
    private var statisticsStorage = PostgresStorageEngine.Statistics()

    /// Completions, in commit order, off the storage thread.
    private let completions = DispatchQueue(label: "hearth.storage.completions")
    private static let completionsKey = DispatchSpecificKey<Bool>()
    /// Signalled by the storage thread when it has closed its connection.
    private let finished = DispatchSemaphore(value: 0)
    /// Set once by the storage thread before it touches the writer.
    nonisolated(unsafe) private var storageThread: pthread_t?

    init(writer: PostgresWriter, location: String) {
        self.location = location
        completions.setSpecific(key: Self.completionsKey, value: true)
        let thread = Thread { [self] in run(writer) }
        thread.name = "hearth.storage"
        thread.start()
    }

    var statistics: PostgresStorageEngine.Statistics {
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
            DispatchQueue.global().async { [location] in
                completion(.failure(StorageError(.closed, "the database \(location) is closed.")))
            }
            return
        }
        appended += 1
        jobs.append(.batch(sequence: appended, batch, completion))
        condition.signal()
        condition.unlock()
    }

    /// Lets queued batches commit, then closes the connection. From a completion it does not wait
    /// (waiting would wait for itself).
    func close() {
        condition.lock()
        let wasClosing = closing
        closing = true
        condition.signal()
        condition.unlock()
        if !wasClosing && !isOnOwnThread {
            finished.wait()
            finished.signal()  // for a later close() racing this one
        }
    }

    /// Runs `body` with the writer on the storage thread, between commits, and waits for it.
    func exclusive<T>(_ body: @escaping (PostgresWriter) throws(StorageError) -> T) throws(StorageError) -> T {
        nonisolated(unsafe) var result: Result<T, StorageError>?
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        guard !closing else {
            condition.unlock()
            throw StorageError(.closed, "the database \(location) is closed.")
        }
        jobs.append(.exclusive({ writer in
            result = Result { () throws(StorageError) in try body(writer) }
            done.signal()
        }))
        condition.signal()
        condition.unlock()
        done.wait()
        guard let result else { preconditionFailure("an exclusive job ended without a result") }
        return try result.get()
    }

    private func run(_ writer: PostgresWriter) {
        storageThread = pthread_self()
        defer {
            writer.disconnect()
            completions.sync {}  // every completion has run before close() returns
            finished.signal()
        }
        while true {
            condition.lock()
            while jobsStart == jobs.count && !closing { condition.wait() }
            if jobsStart == jobs.count {
                condition.unlock()
                return
            }
            var group: [(sequence: Int, batch: WriteBatch, completion: Completion)] = []
            var exclusive: ((PostgresWriter) -> Void)?
            while jobsStart < jobs.count, group.count < Self.batchesPerCommitMax {
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
                exclusive(writer)
                condition.lock()
                statisticsStorage.connections = writer.connectionCount
                condition.unlock()
                continue
            }
            let aborted = group.prefix { $0.sequence <= abortThrough }
            if !aborted.isEmpty {
                let failure = StorageError(.abortedAfterFailure, "an earlier write to \(location) failed to commit, so this one, queued behind it, was not stored. Retry it.")
                let completionsToRun = aborted.map(\.completion)
                completions.async { for completion in completionsToRun { completion(.failure(failure)) } }
            }
            let toCommit = group.dropFirst(aborted.count)
            if toCommit.isEmpty { continue }
            let completionsToRun = toCommit.map(\.completion)
            switch writer.commit(toCommit.map(\.batch)) {
            case .success:
                condition.lock()
                statisticsStorage.connections = writer.connectionCount
                statisticsStorage.commits += 1
                statisticsStorage.batches += toCommit.count
                condition.unlock()
                completions.async { for completion in completionsToRun { completion(.success(())) } }
            case .failure(let error):
                // Wait until the writers have heard: everything appended until then was built on the
                // failed writes, so it fails too (see StorageEngine).
                completions.sync { for completion in completionsToRun { completion(.failure(error)) } }
                condition.lock()
                self.abortThrough = appended
                statisticsStorage.connections = writer.connectionCount
                statisticsStorage.failedCommits += 1
                condition.unlock()
            }
        }
    }
}
