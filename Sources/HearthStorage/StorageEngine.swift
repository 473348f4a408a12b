public import HearthCore
import Dispatch

/// Where a namespace's tree lives between restarts: the server's only view of durable storage.
///
/// The server loads the tree once at startup, then hands every acknowledged write to `append` as a
/// ``WriteBatch`` and acknowledges it to the client only when the completion reports success. Engines
/// commit on their own thread and may group many batches into one durable commit (group commit); a
/// completion is called exactly once, in the order the batches were appended, after the batch is durable
/// or has failed. An engine never makes a later batch durable after failing an earlier one: after a
/// failed commit it also fails every batch already queued (``StorageError/Code/abortedAfterFailure``),
/// since those were computed on a state that included the failed writes.
///
/// Engines: ``InMemoryStorageEngine`` (tests), `SQLiteStorageEngine` (HearthSQLite, one file per
/// namespace) and, later, PostgreSQL for clusters. Callers use ``DurableDatabase`` rather than calling
/// `append` themselves.
public protocol StorageEngine: AnyObject, Sendable {
    /// What is stored where, for messages: `"SQLite hearth-data/demo.sqlite"`.
    var location: String { get }

    /// Reads the whole stored tree. `progress` is called now and then on the calling thread.
    func load(progress: ((LoadProgress) -> Void)?) throws(StorageError) -> Node

    /// Queues `batch` for the next commit; `completion` runs off the caller's stack (on the engine's
    /// completion thread or queue, one at a time, in order) once it is durable
    /// or has failed. Empty batches complete at once, in order.
    func append(_ batch: WriteBatch, completion: @escaping @Sendable (Result<Void, StorageError>) -> Void)

    /// Replaces everything stored with `root` atomically (import). `progress` gets records written.
    func replaceAll(with root: Node, progress: ((LoadProgress) -> Void)?) throws(StorageError)

    /// Rewrites storage to drop unused space (SQLite `VACUUM`); readers and writers may wait meanwhile.
    func compact() throws(StorageError)

    /// Writes a consistent copy of the database to `path` while writes continue.
    func backup(to path: String, progress: ((LoadProgress) -> Void)?) throws(StorageError)

    /// Waits for queued batches, then closes. Later appends fail with ``StorageError/Code/closed``.
    func close()

    /// Reads the change feed (docs/feed.md): at most `limit` entries after `position`, in order, with
    /// the last position retention removed. `completion` runs off the caller's stack. Engines that keep
    /// no feed fail with ``StorageError/Code/unsupported``.
    func readFeed(after position: Int64, limit: Int, completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void)

    /// The entries at `positions` that retention kept, in order, with the last position it removed: a
    /// history's candidates (``feedLocations(of:before:limit:completion:)``). Engines whose reads are
    /// cheap read them one by one (the default); `completion` runs off the caller's stack.
    func readFeed(at positions: [Int64], completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void)

    /// The entries below `before` that hold `location`'s history, from an index of the feed by location;
    /// nil when the engine keeps none, or when reading the feed newest first is the better way (the
    /// location changes often, or the index is still being built). `completion` runs off the caller's
    /// stack.
    func feedLocations(
        of location: Path, before: Int64, limit: Int, completion: @escaping @Sendable (Result<FeedLocationCandidates?, StorageError>) -> Void)

    /// Above this many bytes, a change-feed entry's earlier values are left out (its retention's
    /// ``ChangeFeedRetention/beforeBytesMax``): the database makes entries to this size.
    var feedBeforeBytesMax: Int { get }

    /// The IDs of the writes it committed with one (``WriteBatch/writeID``), oldest first, at most
    /// `Limits.rememberedWriteIDsMax` of the newest: what a server remembers as applied when it opens the
    /// namespace. Engines that keep none return none.
    func rememberedWriteIDs() throws(StorageError) -> [String]

    /// How the engine's background checkpoints go (SQLite copying its write-ahead log into the database
    /// file): a failing one loses nothing, but the log grows until it works. Any thread.
    var checkpointFailures: CheckpointFailures { get }
}

/// Checkpoints that failed since an engine opened, and while they still fail, the last one's error.
public struct CheckpointFailures: Sendable, Equatable {
    public var count: Int
    public var failing: String?

    public init(count: Int = 0, failing: String? = nil) {
        self.count = count
        self.failing = failing
    }
}

/// How far a long storage operation has come.
public struct LoadProgress: Sendable, Equatable {
    /// Records (leaves, markers or pages) done so far.
    public var done: Int
    /// Records in all, when known.
    public var total: Int?

    public init(done: Int, total: Int?) {
        self.done = done
        self.total = total
    }
}

extension StorageEngine {
    public var feedBeforeBytesMax: Int { ChangeFeedRetention.standard.beforeBytesMax }

    public func rememberedWriteIDs() throws(StorageError) -> [String] { [] }

    public var checkpointFailures: CheckpointFailures { CheckpointFailures() }

    public func readFeed(after position: Int64, limit: Int, completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void) {
        let failure = StorageError(.unsupported, "\(location) keeps no change feed yet; serve the namespace from SQLite (docs/feed.md).")
        DispatchQueue.global().async { completion(.failure(failure)) }
    }

    public func feedLocations(
        of location: Path, before: Int64, limit: Int, completion: @escaping @Sendable (Result<FeedLocationCandidates?, StorageError>) -> Void
    ) {
        DispatchQueue.global().async { completion(.success(nil)) }
    }

    public func readFeed(at positions: [Int64], completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void) {
        let positions = positions.sorted()
        @Sendable func read(_ index: Int, _ entries: [ChangeFeedPage.Entry], trimmed: Int64) {
            guard index < positions.count else { return completion(.success(ChangeFeedPage(entries: entries, trimmedThrough: trimmed))) }
            readFeed(after: positions[index] - 1, limit: 1) { result in
                switch result {
                case .failure(let error): completion(.failure(error))
                case .success(let page):
                    read(index + 1, entries + page.entries.filter { $0.position == positions[index] }, trimmed: page.trimmedThrough)
                }
            }
        }
        read(0, [], trimmed: 0)
    }

    /// `readFeed`, waiting for the page.
    public func readFeed(after position: Int64, limit: Int) async throws(StorageError) -> ChangeFeedPage {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<ChangeFeedPage, StorageError>, Never>) in
            readFeed(after: position, limit: limit) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// `readFeed(at:)`, waiting for the page.
    public func readFeed(at positions: [Int64]) async throws(StorageError) -> ChangeFeedPage {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<ChangeFeedPage, StorageError>, Never>) in
            readFeed(at: positions) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// `feedLocations`, waiting for the answer.
    public func feedLocations(of location: Path, before: Int64 = .max, limit: Int = 100) async throws(StorageError) -> FeedLocationCandidates? {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<FeedLocationCandidates?, StorageError>, Never>) in
            feedLocations(of: location, before: before, limit: limit) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Appends `batch` and waits until it is durable or has failed.
    public func append(_ batch: WriteBatch) async throws(StorageError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, StorageError>, Never>) in
            append(batch) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Writes the stored tree as Firebase's JSON export format (with `.priority`), in chunks of about
    /// `chunkByteCount`, so a large export never needs one string of its whole size.
    public func exportJSON(
        chunkByteCount: Int = 1 << 20, to write: ([UInt8]) throws -> Void
    ) throws {
        let root = try load(progress: nil)
        try StorageJSON.write(root, chunkByteCount: chunkByteCount, to: write)
    }
}
