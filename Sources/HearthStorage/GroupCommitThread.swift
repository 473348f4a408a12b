import Foundation
import HearthSupport
#if canImport(Glibc)
    import Glibc
#endif

/// What one engine does on its storage thread (``GroupCommitThread``): commit a group of batches as one
/// transaction, and let go of its connection at the end. Called on the storage thread only.
public protocol GroupCommitter: AnyObject, SendableMetatype {
    /// Commits `batches`, in order, in one transaction: all of them or none.
    func commit(_ batches: [WriteBatch]) -> Result<Void, StorageError>
    /// Before a job that uses the connection directly (an import, a compaction): drop what would get in
    /// its way (prepared statements holding schema locks).
    func prepareForExclusiveWork()
    /// The thread is ending: every queued batch is committed or failed. Close the connection.
    func finish()
    /// What other servers committed since this committer's last commit or catch-up (nil: nothing), read
    /// and taken as the new starting point. Only engines that others write to have any.
    func catchUp() -> Result<RemoteCommit?, StorageError>
}

extension GroupCommitter {
    public func prepareForExclusiveWork() {}
    public func catchUp() -> Result<RemoteCommit?, StorageError> { .success(nil) }
}

/// Commits made and batches they carried: how well group commit is grouping.
public struct GroupCommitStatistics: Sendable, Equatable {
    public var commits = 0
    public var batches = 0
    public var failedCommits = 0
    /// Commits that found their sequence taken by another server's commit.
    public var supersededCommits = 0
    /// Of those, the ones sent again unchanged after the database took the other server's commits in
    /// beneath their batches (they commute: see ``FollowingStorageEngine``); the rest were decided again.
    public var recommittedCommits = 0
    /// Batches per commit, in order (kept for the first 100,000 commits, for benchmarks).
    public var groupSizes: [Int] = []

    public init() {}
}

/// The queue of batches in front of a storage engine and the thread that commits them, the same for
/// every engine: every queued batch (up to `batchesPerCommitMax`) goes into one transaction, completions
/// run in order on a serial queue off this thread (so the next commit starts while writers hear about the
/// last one), and work that needs the connection between commits (an import) runs here too.
///
/// It holds the committer, not the engine, so a dropped engine's `deinit` can end the thread. The queue
/// is protected by `condition`; the committer belongs to the storage thread.
///
/// The ordering rule of ``StorageEngine``: after a failed commit, every batch appended before its writers
/// heard of the failure fails too (`abortThrough`), since those were built on the failed writes.
public final class GroupCommitThread<Committer: GroupCommitter>: @unchecked Sendable {
    public typealias Completion = @Sendable (Result<Void, StorageError>) -> Void
    /// Takes remote commits in; true when the batches appended so far commute with them and stay valid
    /// (see ``FollowingStorageEngine``).
    public typealias Receiver = @Sendable (RemoteCommit) -> Bool

    /// How long the storage thread waits for a fuller group while the last group's completions still
    /// run: their writers may append their next writes then, and one commit of them all pays one fsync
    /// (or round trip) instead of two. Short, so a completion that does not lead to a write costs little.
    static var fullerGroupWait: Double { 0.0003 }

    /// Names the database in errors: "SQLite /data/demo.sqlite".
    public let location: String
    /// Most batches one transaction commits: a bound on one commit's size and its completions' burst.
    public let batchesPerCommitMax: Int
    private let committer: Committer

    // Protected by `condition`.
    private let condition = NSCondition()
    /// The jobs waiting, in order, and which batches fail instead of committing (a value: the decisions).
    private var queue = GroupCommitQueue<Completion, (Committer) -> Void>()
    /// Who hears of remote commits (``follow(_:)``); nil while nobody follows.
    private var receiver: Receiver?
    /// Who waits for the next catch-up and its outcome (``catchUp(then:)``), under `condition`.
    private var catchUpWaiters: [@Sendable (Result<Void, StorageError>) -> Void] = []
    /// When the storage thread sleeps and who wakes it (a value: the decisions).
    private var waits = GroupCommitWaits()
    private var statisticsStorage = GroupCommitStatistics()

    /// Completions, in commit order, off the storage thread.
    private let completions = DispatchQueue(label: "hearth.storage.completions")
    /// Marks `completions`, so that this thread's own completions are told apart from other code.
    private let completionsKey = DispatchSpecificKey<Bool>()
    /// Signalled by the storage thread when the committer has finished.
    private let finished = DispatchSemaphore(value: 0)
    /// Set once by the storage thread before it touches the committer.
    nonisolated(unsafe) private var storageThread: pthread_t?

    public init(committer: Committer, location: String, batchesPerCommitMax: Int = 8192, threadName: String = "hearth.storage") {
        self.committer = committer
        self.location = location
        self.batchesPerCommitMax = batchesPerCommitMax
        completions.setSpecific(key: completionsKey, value: true)
        NamedThread.start(threadName) { [self] in run() }
    }

    /// A snapshot of the counts so far.
    public var statistics: GroupCommitStatistics {
        condition.lock()
        defer { condition.unlock() }
        return statisticsStorage
    }

    /// True on the storage thread and in completions, where waiting for the thread would wait for oneself.
    public var isOnOwnThread: Bool {
        if DispatchQueue.getSpecific(key: completionsKey) == true { return true }
        return storageThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// Queues `batch` for the next commit; `completion` runs once it is durable or has failed, never on
    /// the caller's stack.
    public func append(_ batch: WriteBatch, completion: @escaping Completion) {
        condition.lock()
        guard queue.append(batch, completion) else {
            condition.unlock()
            // Never call back on the caller's stack: callers append while holding their own locks.
            DispatchQueue.global().async { [location] in
                completion(.failure(StorageError(.closed, "the database \(location) is closed.")))
            }
            return
        }
        if waits.appendWakes { condition.signal() }
        condition.unlock()
    }

    /// Lets queued batches commit, then ends the thread and waits for it (and for every completion).
    /// From a completion or the storage thread it does not wait (that would wait for itself).
    public func close() {
        condition.lock()
        let wasClosing = !queue.close()
        condition.signal()
        condition.unlock()
        if !wasClosing && !isOnOwnThread {
            finished.wait()
            finished.signal()  // for a later close() racing this one
        }
    }

    /// Runs `body` with the committer on the storage thread, between commits, and waits for it.
    public func exclusive<T>(_ body: @escaping (Committer) throws(StorageError) -> T) throws(StorageError) -> T {
        nonisolated(unsafe) var result: Result<T, StorageError>?
        let done = DispatchSemaphore(value: 0)
        condition.lock()
        let queued = queue.append(exclusive: { committer in
            result = Result { () throws(StorageError) in try body(committer) }
            done.signal()
        })
        guard queued else {
            condition.unlock()
            throw StorageError(.closed, "the database \(location) is closed.")
        }
        condition.signal()
        condition.unlock()
        done.wait()
        guard let result else { preconditionFailure("an exclusive job ended without a result") }
        return try result.get()
    }

    /// Delivers remote commits to `receive`, on the completion queue, from now on (a catch-up is done
    /// at once). See ``FollowingStorageEngine``.
    public func follow(_ receive: @escaping Receiver) {
        condition.lock()
        receiver = receive
        _ = waits.requestCatchUp()
        condition.signal()
        condition.unlock()
    }

    /// Asks the storage thread to read what other servers committed, between commits. Requests made
    /// before it gets to them are one catch-up.
    public func requestCatchUp() {
        condition.lock()
        if receiver != nil && waits.requestCatchUp() { condition.signal() }
        condition.unlock()
    }

    /// Like ``requestCatchUp()``, and tells `completion` (on the completion queue, after the commits the
    /// catch-up found were delivered) whether it could read what other servers committed: a failure
    /// (PostgreSQL unreachable) means this server may lack some of their acknowledged writes. At once,
    /// successfully, when nothing is followed.
    public func catchUp(then completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        condition.lock()
        guard receiver != nil, !queue.closing else {
            let following = receiver != nil
            condition.unlock()
            let location = location
            completions.async {
                completion(following ? .failure(StorageError(.closed, "the database \(location) is closed.")) : .success(()))
            }
            return
        }
        catchUpWaiters.append(completion)
        if waits.requestCatchUp() { condition.signal() }
        condition.unlock()
    }

    // MARK: The storage thread

    private typealias Queued = GroupCommitQueue<Completion, (Committer) -> Void>.Queued

    private func run() {
        storageThread = pthread_self()
        defer {
            committer.finish()
            let waiting = condition.withLock { () -> [@Sendable (Result<Void, StorageError>) -> Void] in
                defer { catchUpWaiters = [] }
                return catchUpWaiters
            }
            let closed = StorageError(.closed, "the database \(location) is closed.")
            completions.async { for waiter in waiting { waiter(.failure(closed)) } }
            completions.sync {}  // every completion has run before close() returns
            finished.signal()
        }
        while let next = nextJobs() {
            if next.catchUp, let receiver = next.receiver {
                // Whoever asked before this catch-up reads the log is answered by it.
                let waiting = condition.withLock { () -> [@Sendable (Result<Void, StorageError>) -> Void] in
                    defer { catchUpWaiters = [] }
                    return catchUpWaiters
                }
                let caughtUp = committer.catchUp()
                if case .success(let remote?) = caughtUp { deliver(remote, to: receiver) }
                if !waiting.isEmpty {
                    let outcome = caughtUp.map { _ in () }
                    completions.async { for waiter in waiting { waiter(outcome) } }
                }
            }
            if let exclusive = next.exclusive {
                committer.prepareForExclusiveWork()
                exclusive(committer)
                continue
            }
            // Split after the catch-up above: batches it superseded are failed here, not committed.
            let split = condition.withLock { queue.split(next.group) }
            let aborted = split.aborted
            if !aborted.isEmpty {
                let failure = StorageError(.abortedAfterFailure, "an earlier write to \(location) failed to commit, so this one, queued behind it, was not stored. Retry it.")
                let completionsToRun = aborted.map(\.completion)
                completions.async { for completion in completionsToRun { completion(.failure(failure)) } }
            }
            let superseded = split.superseded
            if !superseded.isEmpty {
                let completionsToRun = superseded.map(\.completion)
                completions.async { for completion in completionsToRun { completion(.failure(Self.superseded)) } }
            }
            let toCommit = split.toCommit
            if !toCommit.isEmpty { commit(toCommit, receiver: next.receiver) }
        }
    }

    static var superseded: StorageError {
        StorageError(.superseded, "another server committed to this namespace first; the write is decided again on its data.")
    }

    /// Hands remote commits to the database. Unless it says the batches appended so far commute with
    /// them (true), it queues new writes from now on rather than deciding them on a stale tree, and every
    /// batch appended before that is marked superseded.
    @discardableResult
    private func deliver(_ remote: RemoteCommit, to receiver: @escaping Receiver) -> Bool {
        let absorbed = completions.sync { receiver(remote) }
        if !absorbed { condition.withLock { queue.supersedeAppended() } }
        return absorbed
    }

    /// Waits for work and takes it: a group of batches, or one exclusive job; nil once closing with
    /// nothing left.
    private func nextJobs() -> (
        group: [Queued], exclusive: ((Committer) -> Void)?, catchUp: Bool, receiver: Receiver?
    )? {
        condition.lock()
        defer { condition.unlock() }
        var deadline: Date?
        var deadlinePassed = false
        while true {
            switch waits.next(jobs: queue.count, closing: queue.closing, groupMax: batchesPerCommitMax, deadlinePassed: deadlinePassed) {
            case .waitForJobs(timed: false):
                condition.wait()
            case .waitForJobs(timed: true):
                _ = condition.wait(until: Date(timeIntervalSinceNow: Self.fullerGroupWait))
            case .waitForFullerGroup:
                // Writers hearing about the last commit append their next writes now: wait for them
                // (appends do not wake this wait; the completions' end, a close or the deadline do).
                let until = deadline ?? Date(timeIntervalSinceNow: Self.fullerGroupWait)
                deadline = until
                deadlinePassed = !condition.wait(until: until)
            case .take(let catchUp):
                let turn = queue.take(max: batchesPerCommitMax)
                return (turn.group, turn.exclusive, catchUp, receiver)
            case .end:
                return nil
            }
        }
    }

    private func commit(_ toCommit: ArraySlice<Queued>, receiver: Receiver?) {
        let completionsToRun = toCommit.map(\.completion)
        let batches = toCommit.map(\.batch)
        var result = committer.commit(batches)
        retrying: while case .failure(let error) = result, error.code == .superseded, let receiver {
            // Another server took the sequence: read what it committed and hand it over. When the database
            // takes it in beneath these batches, they commit after it unchanged; otherwise this group (and
            // everything appended before the database heard) is decided again.
            condition.withLock { statisticsStorage.supersededCommits += 1 }
            let remote: RemoteCommit?
            switch committer.catchUp() {
            case .success(let read): remote = read
            case .failure(let failure):
                result = .failure(failure)
                break retrying
            }
            guard let remote else {
                // The number is taken, yet nothing newer can be read (not expected): fail as a failed
                // commit does, so that nothing appended behind these is stored ahead of them.
                fail(completionsToRun, with: error)
                return
            }
            if deliver(remote, to: receiver) {
                condition.withLock { statisticsStorage.recommittedCommits += 1 }
                result = committer.commit(batches)
                continue
            }
            // `deliver` marked everything appended before the database heard as superseded.
            completions.async { for completion in completionsToRun { completion(.failure(error)) } }
            return
        }
        switch result {
        case .success:
            condition.lock()
            statisticsStorage.commits += 1
            statisticsStorage.batches += toCommit.count
            if statisticsStorage.groupSizes.count < 100_000 { statisticsStorage.groupSizes.append(toCommit.count) }
            waits.groupCommitted()
            condition.unlock()
            completions.async { [self] in
                for completion in completionsToRun { completion(.success(())) }
                condition.lock()
                if waits.groupCompleted() { condition.signal() }
                condition.unlock()
            }
        case .failure(let error):
            fail(completionsToRun, with: error)
        }
    }

    private func fail(_ completionsToRun: [Completion], with error: StorageError) {
        // Wait until the writers have heard: everything appended until then was built on the failed
        // writes, so it fails too (see StorageEngine).
        completions.sync { for completion in completionsToRun { completion(.failure(error)) } }
        condition.lock()
        queue.abortAppended()
        statisticsStorage.failedCommits += 1
        condition.unlock()
    }
}
