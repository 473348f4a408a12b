import HearthCore
import HearthProtocol
import HearthServer
import HearthStorage
import HearthTesting

/// Completions of writes "committed" by ``SynchronousStorageEngine``, run when the fuzzer drains them
/// (like a storage thread, never inside `append`: the database holds its lock there).
final class PendingCommits: @unchecked Sendable {  // used by one thread at a time
    var completions: [@Sendable (Result<Void, StorageError>) -> Void] = []

    /// Runs every completion, including those the completions queue.
    func drain() {
        while !completions.isEmpty {
            let batch = completions
            completions = []
            for completion in batch { completion(.success(())) }
        }
    }
}

/// A storage engine that keeps nothing and commits every write when ``PendingCommits/drain()`` runs,
/// on the caller's thread: a fuzz input then runs start to finish inside one call, with nothing left
/// behind for the next.
final class SynchronousStorageEngine: StorageEngine, @unchecked Sendable {  // used by one thread at a time
    let pending: PendingCommits
    init(pending: PendingCommits) { self.pending = pending }
    var location: String { "fuzz" }
    func load(progress: ((LoadProgress) -> Void)?) throws(StorageError) -> Node { .empty }
    func append(_ batch: WriteBatch, completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        pending.completions.append(completion)
    }
    func replaceAll(with root: Node, progress: ((LoadProgress) -> Void)?) throws(StorageError) {}
    func compact() throws(StorageError) {}
    func backup(to path: String, progress: ((LoadProgress) -> Void)?) throws(StorageError) {}
    func close() {}
}

/// A fresh server in emulator mode (open rules; `owner` is admin) on synchronous storage, and what
/// commits its writes.
func makeFuzzServer() -> (DatabaseServer, PendingCommits) {
    let pending = PendingCommits()
    let server = DatabaseServer(
        configuration: ServerConfiguration(emulator: true, adminToken: "fuzz-admin", defaultNamespace: "fuzz"),
        openEngine: { _ in SynchronousStorageEngine(pending: pending) })
    server.clock = { 1_800_000_000_000 }
    server.loopStarted(executor: ImmediateExecutor())
    return (server, pending)
}
