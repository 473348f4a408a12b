public import HearthCore
import Dispatch
import Synchronization

/// A storage engine that keeps the tree in memory: for tests, and as the reference the conformance suite
/// holds every engine to. Nothing survives the process.
///
/// Engines that share one ``Store`` see the same data, which is how tests "restart" it:
///
///     let store = InMemoryStorageEngine.Store()
///     let engine = InMemoryStorageEngine(store: store)
///     // … append, close …
///     let reopened = InMemoryStorageEngine(store: store)
public final class InMemoryStorageEngine: StorageEngine {
    /// The data that outlives one engine.
    public final class Store: Sendable {
        let root = Mutex(Node.empty)
        /// The change feed: every entry, one commit each (no retention).
        let feed = Mutex<[ChangeFeedPage.Entry]>([])
        /// Commits to fail on purpose, to test how callers handle a failed commit.
        let failuresToInject = Mutex(0)
        public init() {}

        /// Fails the next `count` commits with ``StorageError/Code/diskFull``.
        public func injectFailures(_ count: Int) { failuresToInject.withLock { $0 = count } }
    }

    /// When commits run: on the engine's own queue, in order, like a storage thread (`.ownQueue`); or
    /// only when the test calls ``runQueuedCommits()``, on its thread (`.whenTold`), as swift-nio's
    /// EmbeddedEventLoop runs when told: a test that plays the loop then steps the server without
    /// waiting for another thread.
    public enum Commits: Sendable {
        case ownQueue
        case whenTold
    }

    public let store: Store
    private let commits: Commits
    /// Commits run here, in order, like an engine's storage thread (`.ownQueue`).
    private let queue = DispatchQueue(label: "hearth.storage.memory")
    /// Commits waiting for ``runQueuedCommits()`` (`.whenTold`), in order.
    private let told = Mutex<[@Sendable () -> Void]>([])
    private let state = Mutex(State())

    private struct State {
        var closed = false
        /// Batches appended so far; a batch's sequence number is the count after its append.
        var appended = 0
        /// Batches up to this sequence number fail without a commit: they were queued when an earlier
        /// commit failed (see ``StorageEngine``).
        var abortThrough = 0
    }

    public init(store: Store = Store(), commits: Commits = .ownQueue) {
        self.store = store
        self.commits = commits
    }

    /// Runs the commits appended so far (not those their completions append), in order, on the caller's
    /// thread; how many ran. Engines made with `.whenTold` only; the others commit by themselves (0).
    @discardableResult
    public func runQueuedCommits() -> Int {
        let work = told.withLock { queued in
            defer { queued = [] }
            return queued
        }
        for commit in work { commit() }
        return work.count
    }

    private func schedule(_ commit: @escaping @Sendable () -> Void) {
        switch commits {
        case .ownQueue: queue.async(execute: commit)
        case .whenTold: told.withLock { $0.append(commit) }
        }
    }

    public var location: String { "memory" }

    public func load(progress: ((LoadProgress) -> Void)?) throws(StorageError) -> Node {
        let root = store.root.withLock { $0 }
        progress?(LoadProgress(done: root.leafCount, total: root.leafCount))
        return root
    }

    public func append(_ batch: WriteBatch, completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        let sequence = state.withLock { state -> Int? in
            if state.closed { return nil }
            state.appended += 1
            return state.appended
        }
        guard let sequence else {
            schedule { completion(.failure(StorageError(.closed, "the in-memory engine is closed."))) }
            return
        }
        schedule { [store, self] in
            if self.state.withLock({ sequence <= $0.abortThrough }) {
                completion(.failure(StorageError(.abortedAfterFailure, "an earlier write failed to commit, so this one was not stored. Retry it.")))
                return
            }
            let fail = store.failuresToInject.withLock { count -> Bool in
                guard count > 0 else { return false }
                count -= 1
                return true
            }
            if fail {
                completion(.failure(StorageError(.diskFull, "injected failure: the disk is full. Nothing from this write was stored.")))
                // After the writer has heard of the failure: everything queued so far was built on it.
                self.state.withLock { $0.abortThrough = $0.appended }
                return
            }
            store.root.withLock { $0 = $0.applying(batch) }
            if let entry = batch.feed {
                store.feed.withLock { feed in
                    guard let json = entry.bytes.withUnsafeBytes({ try? ChangeFeedRecord.json(decoding: $0) }) else {
                        preconditionFailure("an entry the database encoded does not decode")
                    }
                    feed.append(.init(position: ChangeFeedPosition.of(commit: Int64(feed.count + 1), index: 0), json: json))
                }
            }
            completion(.success(()))
        }
    }

    public func replaceAll(with root: Node, progress: ((LoadProgress) -> Void)?) throws(StorageError) {
        runQueuedCommits()
        queue.sync { store.root.withLock { $0 = root } }
        progress?(LoadProgress(done: root.leafCount, total: root.leafCount))
    }

    public func compact() throws(StorageError) {}

    public func backup(to path: String, progress: ((LoadProgress) -> Void)?) throws(StorageError) {
        throw StorageError(.unsupported, "the in-memory engine keeps nothing on disk to back up; use the SQLite engine.")
    }

    public func readFeed(after position: Int64, limit: Int, completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void) {
        schedule { [store] in
            let (entries, head) = store.feed.withLock { feed in (Array(feed.lazy.filter { $0.position > position }.prefix(limit)), feed.last?.position ?? 0) }
            completion(.success(ChangeFeedPage(entries: entries, trimmedThrough: 0, head: head)))
        }
    }

    public func close() {
        state.withLock { $0.closed = true }
        queue.sync {}
    }
}
