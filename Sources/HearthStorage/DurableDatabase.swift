public import HearthCore
import Synchronization

/// A namespace's tree in front of a ``StorageEngine``: writes are acknowledged only once durable, and
/// readers only ever see durable data.
///
/// It keeps two trees. Writes are validated and applied to the *pending* tree at once (so the next
/// write, a compare-and-set or an increment, builds on it), turned into a ``WriteBatch`` and appended to
/// the engine in the same order. When the engine reports a batch durable, its changes are applied to the
/// *committed* tree, which is what ``root`` and ``read(_:)`` show and what listeners are told about; only
/// then does the writer hear "ok". When a commit fails, the writer gets the error, the committed tree
/// never sees the write, and the pending tree is rebuilt from the committed one as soon as the writes
/// queued behind the failure have drained (the engine fails those too, see ``StorageEngine``). Until
/// then new writes fail with ``StorageError/Code/abortedAfterFailure`` instead of building on data that
/// will not exist.
///
///     let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
///     let write = try await database.set("users/ada/name", to: Node("Ada"))
///     // durable now; write.changes are relative to the committed tree, for events
///
/// Thread-safe: every field is protected by `state`'s mutex. Completions run on the engine's thread, or
/// where the `finishOn` given to ``init(engine:root:finishOn:)`` runs them.
public final class DurableDatabase: Sendable {
    /// What a durable write changed, for raising events: the change set against the committed tree
    /// and the committed tree right after it.
    public struct CommittedWrite: Sendable {
        public var changes: ChangeSet
        public var root: Node
    }

    private struct State: ~Copyable {
        /// Durable data: what readers and listeners see.
        var committed: DatabaseTree
        /// Committed data plus writes not yet durable: what new writes build on.
        var pending: DatabaseTree
        /// Batches appended to the engine whose completion has not run yet.
        var inFlight = 0
        /// A commit failed and `pending` holds writes that will never be durable.
        var failed = false
    }

    public let engine: any StorageEngine
    private let state: Mutex<State>

    /// Runs the work that moves a durable batch into the committed tree and tells its writer; nil runs
    /// it on the engine's completion thread.
    public typealias Finisher = @Sendable (_ work: @escaping @Sendable () -> Void) -> Void
    /// Where batches are finished: see ``init(engine:root:finishOn:)``.
    public let finisher: Finisher?

    /// Decides, under the database's lock, whether a write may happen (the server's security rules):
    /// given the locations the write replaces and the tree before and after it (pending writes
    /// included, server values resolved). Returns the error to report, or nil to let the write go on.
    public typealias WriteCheck = @Sendable (_ locations: [Path], _ before: Node, _ after: Node) -> (any Error)?

    /// A database over `engine`, starting from `root` (what `engine.load` returned).
    ///
    /// `finishOn` hands each durable batch's finishing (applying it to the committed tree, then its
    /// completion) to the thread that consumes the results, such as a server's event loop, in commit
    /// order. Give it when completions keep ``CommittedWrite/root`` past their own return on another
    /// thread: finishing there means no snapshot is still held when the next batch is applied, so the
    /// committed tree mutates in place instead of copying every node on the write's path, to be freed
    /// later by whoever drops the old snapshot (a quarter of a REST PUT's instructions, see
    /// docs/BENCHMARKS.md, rest.rw). Completions then run on that thread.
    public init(engine: any StorageEngine, root: Node, finishOn: Finisher? = nil) {
        self.engine = engine
        finisher = finishOn
        state = Mutex(State(committed: DatabaseTree(root: root), pending: DatabaseTree(root: root)))
    }

    /// The committed tree: every write in it is durable.
    public var root: Node { state.withLock { $0.committed.root } }

    /// Reads the committed tree (with its indexes) under the lock.
    public func read<Result>(_ body: (borrowing DatabaseTree) throws -> Result) rethrows -> Result {
        try state.withLock { try body($0.committed) }
    }

    /// Keeps an index on the committed tree (see `DatabaseTree.ensureIndex`).
    public func ensureIndex(at path: Path, by index: QueryIndex) {
        state.withLock { $0.committed.ensureIndex(at: path, by: index) }
    }

    /// Writes `value` at `path` (see `DatabaseTree.set`); `completion` runs once the write is durable or
    /// has failed. Validation errors and hash mismatches are reported through `completion` too.
    public func set(
        _ path: Path, to value: Node, ifHash: String? = nil, now: Int64? = nil, check: WriteCheck? = nil,
        completion: @escaping @Sendable (Result<CommittedWrite, any Error>) -> Void
    ) {
        let target = path.last == .priorityKey ? (path.parent ?? path) : path
        guard let check else {
            return write(completion, targets: [target]) { tree throws(DataError) in
                try tree.set(path, to: value, ifHash: ifHash, now: now)
            }
        }
        // The rules decide before the hash is compared: a `datastale` or 412 must never tell a caller the
        // rules would refuse anything about the data (whether a guess matched, or the value itself).
        write(completion, targets: [target], check: check, ifHash: ifHash.map { (path, $0) }) { tree throws(DataError) in
            try tree.set(path, to: value, now: now)
        }
    }

    /// Writes several locations below `path` atomically (see `DatabaseTree.update`).
    public func update(
        _ path: Path, with values: [(Path, Node)], now: Int64? = nil, check: WriteCheck? = nil,
        completion: @escaping @Sendable (Result<CommittedWrite, any Error>) -> Void
    ) {
        // A target's proper ancestors include those of its node when it ends in `.priority`: a superset.
        write(completion, targets: values.map { path.appending(path: $0.0) }, check: check) { tree throws(DataError) in
            try tree.update(path, with: values, now: now)
        }
    }

    /// `set`, waiting for durability.
    @discardableResult
    public func set(_ path: Path, to value: Node, ifHash: String? = nil, now: Int64? = nil) async throws -> CommittedWrite {
        try await withCheckedThrowingContinuation { continuation in
            set(path, to: value, ifHash: ifHash, now: now) { continuation.resume(with: $0) }
        }
    }

    /// `update`, waiting for durability.
    @discardableResult
    public func update(_ path: Path, with values: [(Path, Node)], now: Int64? = nil) async throws -> CommittedWrite {
        try await withCheckedThrowingContinuation { continuation in
            update(path, with: values, now: now) { continuation.resume(with: $0) }
        }
    }

    private func write(
        _ completion: @escaping @Sendable (Result<CommittedWrite, any Error>) -> Void,
        targets: [Path],
        check: WriteCheck? = nil,
        ifHash: (path: Path, hash: String)? = nil,
        _ apply: (inout DatabaseTree) throws(DataError) -> ChangeSet
    ) {
        let refused: (any Error)? = state.withLock { state -> (any Error)? in
            if state.failed {
                return StorageError(
                    .abortedAfterFailure,
                    "an earlier write failed to commit to \(engine.location) and writes queued behind it are draining. Retry.")
            }
            // What storage holds above the written paths, read before the write without keeping the
            // old root: holding it would make the write copy every node on its path.
            let ancestors = WriteBatch.AncestorRecords(of: targets, in: state.pending.root)
            let changes: ChangeSet
            if let check {
                // Tried on a copy, kept only when allowed (the copy costs the nodes on the write's path).
                var trial = state.pending
                do { changes = try apply(&trial) } catch { return error }
                if let denied = check(targets, state.pending.root, trial.root) { return denied }
                if let (path, hash) = ifHash, state.pending.root.child(at: path).hash != hash {
                    return DataError(.hashMismatch, "Transaction hash does not match")
                }
                state.pending = trial
            } else {
                do { changes = try apply(&state.pending) } catch { return error }
            }
            let batch = WriteBatch(changes: changes, ancestorsBefore: ancestors, after: state.pending.root)
            state.inFlight += 1
            // Appended under the lock, so the engine sees batches in the order `pending` applied them.
            engine.append(batch) { [self] result in
                guard let finisher else { return completion(self.finish(changes, result)) }
                // A failure stops new writes now, on the engine's thread: the engine accepts batches again
                // as soon as this returns (see StorageEngine), and a write taken before the finisher runs
                // would build on the failed one and be stored.
                if case .failure = result { self.state.withLock { $0.failed = true } }
                finisher { completion(self.finish(changes, result)) }
            }
            return nil
        }
        if let refused { completion(.failure(refused)) }
    }

    /// Moves a batch's changes into the committed tree, or records the failure.
    private func finish(_ changes: ChangeSet, _ result: Result<Void, StorageError>) -> Result<CommittedWrite, any Error> {
        state.withLock { state -> Result<CommittedWrite, any Error> in
            state.inFlight -= 1
            defer {
                if state.failed && state.inFlight == 0 {
                    state.pending = DatabaseTree(root: state.committed.root)
                    state.failed = false
                }
            }
            switch result {
            case .failure(let error):
                state.failed = true
                return .failure(error)
            case .success:
                // Validated and resolved on the pending tree already: applied without checking again.
                var applied = changes
                for index in applied.changes.indices {
                    applied.changes[index] = state.committed.apply(validated: applied.changes[index])
                }
                return .success(CommittedWrite(changes: applied, root: state.committed.root))
            }
        }
    }

    /// Waits until every write appended so far is durable or has failed.
    public func waitForPendingWrites() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.withLock { _ in
                engine.append(WriteBatch(operations: [])) { [finisher] _ in
                    // Through the finisher too, so every earlier batch is in the committed tree first.
                    guard let finisher else { return continuation.resume() }
                    finisher { continuation.resume() }
                }
            }
        }
    }
}
