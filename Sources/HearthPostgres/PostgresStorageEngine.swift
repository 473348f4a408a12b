public import HearthCore
public import HearthStorage
public import HearthSupport
import Synchronization

/// A namespace stored in PostgreSQL: its records in `hearth_records` and one `hearth_changes` row per
/// commit, in tables every namespace of the database shares (`PostgresSchema`, docs/storage.md). Like
/// the SQLite engine, one storage thread commits many batches per transaction (group commit) and
/// acknowledges each only after PostgreSQL has committed it.
///
///     let engine = try PostgresStorageEngine(url: "postgresql://hearth:secret@db:5432/hearth", namespace: "demo")
///     let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
///
/// While PostgreSQL is down or unreachable, writes fail within `PostgresTimeouts` (a refused connection
/// at once) and the next write reconnects. Threads: the storage thread owns the writing connection;
/// `load`, `backup` and `compact` open short-lived connections of their own on the calling thread. One
/// engine writes a namespace at a time (two would fence each other out: `hearth_changes`' key).
public final class PostgresStorageEngine: FollowingStorageEngine {
    /// The namespace this engine reads and writes.
    public let namespace: String
    let endpoint: PostgresEndpoint
    public var location: String { "PostgreSQL \(endpoint) namespace '\(namespace)'" }

    /// Commits made and batches they carried, and commits that failed or were superseded: the
    /// group-commit counts every engine keeps.
    public typealias Statistics = GroupCommitStatistics

    public var commitStatistics: Statistics { thread.statistics }

    /// Connections the storage thread opened: more than one means it reconnected.
    public var connectionsOpened: Int { connections.current }

    /// Most batches one transaction commits: a bound on one commit's size and its completions' burst.
    static let batchesPerCommitMax = 8192

    private let thread: GroupCommitThread<PostgresWriter>
    /// Reads the change feed on its own connection and queue.
    private let feedReader: PostgresFeedReader
    /// The feed's location index, for histories (built when one is first asked for).
    private let feedLocations: FeedLocationIndex<PostgresFeedLocationStore>
    /// The writer's count of connections opened, readable beside the storage thread.
    private let connections: PostgresWriter.ConnectionCount
    /// The writer's last sequence, readable beside the storage thread.
    private let knownSequence: PostgresWriter.KnownSequence
    /// The sequence of the tree the last `load` returned: where following starts.
    let loadedSequence = Mutex<Int64?>(nil)
    private let log: Log
    public let feedBeforeBytesMax: Int

    /// An engine for `namespace` over the database at `url` (`postgresql://user:password@host:port/dbname`,
    /// or anything else libpq accepts as a URL). Connects at once, creating Hearth's tables when they are
    /// missing and entering the namespace in the catalogue, so a wrong URL or a stopped server is
    /// reported here; `log` hears what an operator should
    /// know later (a commit reported failed that PostgreSQL stored after all).
    ///
    /// - Throws: ``StorageError``: `.invalidData` for a bad URL or namespace, `.unavailable` when
    ///   PostgreSQL cannot be reached (naming the URL without its password, and what to check),
    ///   `.corrupt` for tables of a newer Hearth.
    public init(url: String, namespace: String, feedRetention: ChangeFeedRetention = .standard, log: Log = .silent) throws(StorageError) {
        guard NamespaceName.isValid(namespace) else { throw StorageError(.invalidData, NamespaceName.invalidMessage(namespace)) }
        let endpoint = try PostgresEndpoint(url: url)
        self.endpoint = endpoint
        self.namespace = namespace
        feedBeforeBytesMax = feedRetention.beforeBytesMax
        let writer = PostgresWriter(endpoint: endpoint, namespace: namespace, feedRetention: feedRetention, log: log)
        feedReader = PostgresFeedReader(endpoint: endpoint, namespace: namespace)
        feedLocations = FeedLocationIndex(PostgresFeedLocationStore(reader: feedReader, endpoint: endpoint, namespace: namespace))
        connections = writer.connectionCount
        knownSequence = writer.knownSequence
        self.log = log
        thread = GroupCommitThread(committer: writer, location: "PostgreSQL \(endpoint) namespace '\(namespace)'", batchesPerCommitMax: Self.batchesPerCommitMax)
        // The first connect on the storage thread: the layout is made and checked before anyone writes.
        do {
            try thread.exclusive { writer throws(StorageError) in try writer.register() }
        } catch {
            thread.close()
            throw error
        }
    }

    deinit { thread.close() }

    public func readFeed(after position: Int64, limit: Int, completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void) {
        feedReader.read(after: position, limit: limit, completion: completion)
    }

    public func readFeed(at positions: [Int64], completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void) {
        feedReader.read(at: positions, completion: completion)
    }

    public func feedLocations(
        of location: Path, before: Int64, limit: Int, completion: @escaping @Sendable (Result<FeedLocationCandidates?, StorageError>) -> Void
    ) {
        feedLocations.candidates(of: location, before: before, limit: limit, completion: completion)
    }

    // MARK: Following other servers

    /// Delivers what other servers commit to this namespace, from the tree the last `load` returned
    /// (``FollowingStorageEngine``): woken by PostgreSQL's notifications (`PostgresChangeListener`), and
    /// after any commit that finds its sequence taken.
    public func follow(_ receive: @escaping @Sendable (RemoteCommit) -> Bool) {
        let loaded = loadedSequence.withLock { $0 }
        do {
            try thread.exclusive { writer throws(StorageError) in writer.startFollowing(from: loaded) }
        } catch {
            return  // closed: nothing to follow
        }
        thread.follow(receive)
        PostgresChangeListener.shared(for: endpoint, log: log).add(self)
    }

    /// Whether commit `sequence` is newer than anything this engine has.
    func isBehind(_ sequence: Int64) -> Bool { sequence > knownSequence.current }

    /// Asks the storage thread to read the change log (see `GroupCommitThread.requestCatchUp`).
    public func catchUp() { thread.requestCatchUp() }

    public func catchUp(then completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        thread.catchUp(then: completion)
    }

    public func append(_ batch: WriteBatch, completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        thread.append(batch, completion: completion)
    }

    public func replaceAll(with root: Node, progress: ((LoadProgress) -> Void)?) throws(StorageError) {
        nonisolated(unsafe) let progress = progress  // called on the storage thread while the caller waits
        try thread.exclusive { writer throws(StorageError) in try writer.replaceAll(with: root, progress: progress) }
    }

    /// Replaces the namespace's data with the Firebase JSON export read from `descriptor`, in one
    /// transaction (all or nothing) and bounded memory: the file is read in 8 MB steps and its records
    /// sent as they are read (`StreamingImporter`, as SQLite's import). Followers reload the namespace
    /// when they reach it. Returns the records written.
    @discardableResult
    public func importJSON(from descriptor: Int32, byteCount: Int? = nil, progress: ((ImportProgress) -> Void)? = nil) throws(StorageError) -> Int {
        nonisolated(unsafe) let progress = progress  // called on the storage thread while the caller waits
        return try thread.exclusive { writer throws(StorageError) in
            try writer.importJSON(from: descriptor, byteCount: byteCount, progress: progress)
        }
    }

    /// Waits for queued batches and their completions, then closes the connection.
    public func close() {
        thread.close()
        feedReader.close()
        feedLocations.waitForBuild()
    }

    /// A connection of the calling thread's own, for reads and maintenance beside the storage thread.
    func openConnection(doing: String) throws(StorageError) -> PostgresConnection {
        try endpoint.connect(doing: doing)
    }
}
