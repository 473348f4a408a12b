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
        /// Another server had applied the write (its client sent it again, with its write ID): nothing
        /// changed here.
        public var appliedElsewhere = false
    }

    /// One write another server committed (``follow(_:)``; a snapshot when the log had been trimmed),
    /// applied to the committed tree: the change set, the tree after it, and the locations it replaced
    /// (for fan-out, as a merge of them at the root).
    public struct RemoteWrite: Sendable {
        public var changes: ChangeSet
        public var root: Node
        public var locations: [Path]
    }

    private struct State: ~Copyable {
        /// Durable data: what readers and listeners see.
        var committed: DatabaseTree
        /// Committed data plus writes not yet durable: what new writes build on.
        var pending: DatabaseTree
        /// Counts every change of `pending`: a write decided outside the lock on a copy is kept only when
        /// `pending` is still the tree it was decided on.
        var pendingVersion: UInt64 = 0
        /// The writes between decision and durability: whether new ones may be decided, what those in
        /// flight read, and which wait to be decided again (the decisions, as a value).
        var writes = WriteQueue<Write>()
        /// Told of every remote commit once it is in the committed tree (``follow(_:)``).
        var onRemote: (@Sendable (RemoteWrite) -> Void)?
        /// The write IDs of other servers' commits handed over: a client's write that one of them applied
        /// (it resent it here after losing its answer) is acknowledged, not applied again.
        var remoteWriteIDs = RecentWriteIDs()
        /// The write IDs of this server's writes in flight: a remote commit with one of them does not
        /// commute with them (see `receive`).
        var writeIDsInFlight: Set<String> = []
    }

    /// Why a write was not decided: another server applied it already (its write ID is in
    /// `remoteWriteIDs`). Its writer is told it succeeded.
    private struct AppliedElsewhere: Error {}

    /// A write as it was asked for, kept until it is durable: a superseded one is decided again on the
    /// caught-up tree (rules, transaction hash, server values at the time it was asked).
    private struct Write: Sendable {
        var targets: [Path]
        var check: WriteCheck?
        var ifHash: (path: Path, hash: String)?
        var carriesOut: [LedgerEntry] = []
        /// What the change feed records of it, when it records it.
        var feed: ChangeFeedNote?
        /// The ID its client gave it, recorded as applied in its commit (``WriteBatch/writeID``).
        var writeID: String?
        var apply: @Sendable (inout DatabaseTree) throws(DataError) -> ChangeSet
        var completion: @Sendable (Result<CommittedWrite, any Error>) -> Void

        init(
            targets: [Path], check: WriteCheck? = nil, ifHash: (path: Path, hash: String)? = nil,
            completion: @escaping @Sendable (Result<CommittedWrite, any Error>) -> Void,
            apply: @escaping @Sendable (inout DatabaseTree) throws(DataError) -> ChangeSet
        ) {
            self.targets = targets
            self.check = check
            self.ifHash = ifHash
            self.apply = apply
            self.completion = completion
        }
    }

    public let engine: any StorageEngine
    private let state: Mutex<State>
    /// The engine's limit on the earlier values a feed entry keeps, read once.
    private let feedBeforeBytesMax: Int

    /// Runs the work that moves a durable batch into the committed tree and tells its writer; nil runs
    /// it on the engine's completion thread.
    public typealias Finisher = @Sendable (_ work: @escaping @Sendable () -> Void) -> Void
    /// Where batches are finished: see ``init(engine:root:finishOn:)``.
    public let finisher: Finisher?

    /// Decides whether a write may happen (the server's security rules), outside the database's lock on a copy of the pending tree (under it when that tree changed meanwhile, see `decideChecked`):
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
        feedBeforeBytesMax = engine.feedBeforeBytesMax
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
    ///
    /// `feed` is what the change feed records of the write (docs/feed.md); the batch carries it with the
    /// values the write replaced, and `writeID`, its client's ID for it, to be remembered as applied.
    public func set(
        _ path: Path, to value: Node, ifHash: String? = nil, now: Int64? = nil, check: WriteCheck? = nil,
        feed: ChangeFeedNote? = nil, writeID: String? = nil, completion: @escaping @Sendable (Result<CommittedWrite, any Error>) -> Void
    ) {
        let target = path.last == .priorityKey ? (path.parent ?? path) : path
        var write: Write
        if let check {
            // The rules decide before the hash is compared: a `datastale` or 412 must never tell a caller
            // the rules would refuse anything about the data (whether a guess matched, or the value itself).
            write = Write(targets: [target], check: check, ifHash: ifHash.map { (path, $0) }, completion: completion) { tree throws(DataError) in
                try tree.set(path, to: value, now: now)
            }
        } else {
            write = Write(targets: [target], completion: completion) { tree throws(DataError) in
                try tree.set(path, to: value, ifHash: ifHash, now: now)
            }
        }
        write.feed = feed
        write.writeID = writeID
        self.write(write)
    }

    /// Writes several locations below `path` atomically (see `DatabaseTree.update`), and removes the
    /// ledger entries it `carriesOut` in the same commit (``LedgerEntry``).
    public func update(
        _ path: Path, with values: [(Path, Node)], now: Int64? = nil, check: WriteCheck? = nil, carriesOut: [LedgerEntry] = [],
        feed: ChangeFeedNote? = nil, writeID: String? = nil, completion: @escaping @Sendable (Result<CommittedWrite, any Error>) -> Void
    ) {
        // A target's proper ancestors include those of its node when it ends in `.priority`: a superset.
        var write = Write(targets: values.map { path.appending(path: $0.0) }, check: check, completion: completion) { tree throws(DataError) in
            try tree.update(path, with: values, now: now)
        }
        write.carriesOut = carriesOut
        write.feed = feed
        write.writeID = writeID
        self.write(write)
    }

    /// `set`, waiting for durability.
    @discardableResult
    public func set(
        _ path: Path, to value: Node, ifHash: String? = nil, now: Int64? = nil, feed: ChangeFeedNote? = nil
    ) async throws -> CommittedWrite {
        try await withCheckedThrowingContinuation { continuation in
            set(path, to: value, ifHash: ifHash, now: now, feed: feed) { continuation.resume(with: $0) }
        }
    }

    /// `update`, waiting for durability.
    @discardableResult
    public func update(
        _ path: Path, with values: [(Path, Node)], now: Int64? = nil, feed: ChangeFeedNote? = nil
    ) async throws -> CommittedWrite {
        try await withCheckedThrowingContinuation { continuation in
            update(path, with: values, now: now, feed: feed) { continuation.resume(with: $0) }
        }
    }

    private func write(_ write: Write) {
        let refused = write.check == nil ? state.withLock { state in decide(write, &state) } : decideChecked(write)
        guard let refused else { return }
        guard refused is AppliedElsewhere else { return write.completion(.failure(refused)) }
        // Acknowledged once the commit that applied it is in the committed tree (it may be in the
        // pending tree alone now): after the batches before it, as a write of its own would be.
        afterWritesInFlight { [self] in write.completion(.success(CommittedWrite(changes: ChangeSet(), root: root, appliedElsewhere: true))) }
    }

    /// A write with a check (the security rules) is decided outside the lock, on a copy of the pending
    /// tree: the rules, which may read anywhere, never hold the storage thread's completions up. It is
    /// kept when `pending` did not change meanwhile; otherwise (another write's failure rebuilt it, or
    /// another server's commit went in) it is decided again under the lock, as writes were before.
    private func decideChecked(_ write: Write) -> (any Error)? {
        guard let check = write.check else { return state.withLock { state in decide(write, &state) } }
        let snapshot = state.withLock { state -> (tree: DatabaseTree, version: UInt64)? in
            state.writes.decidesNow ? (state.pending, state.pendingVersion) : nil
        }
        guard let snapshot else { return state.withLock { state in decide(write, &state) } }
        let targets = write.targets
        let ancestors = WriteBatch.AncestorRecords(of: targets, in: snapshot.tree.root)
        let context = Self.context(of: write, in: snapshot.tree.root)
        var trial = snapshot.tree
        let changes: ChangeSet
        do { changes = try write.apply(&trial) } catch { return error }
        // The rules decide before the hash is compared (see `set`).
        if let denied = check(targets, snapshot.tree.root, trial.root) { return denied }
        if let (path, hash) = write.ifHash, snapshot.tree.root.child(at: path).hash != hash {
            return DataError(.hashMismatch, "Transaction hash does not match")
        }
        return state.withLock { state -> (any Error)? in
            guard state.pendingVersion == snapshot.version, state.writes.decidesNow else { return decide(write, &state) }
            if let id = write.writeID, state.remoteWriteIDs.contains(id) { return AppliedElsewhere() }
            state.pending = trial
            accept(write, changes, ancestors, context, &state)
            return nil
        }
    }

    /// Applies `write` to the pending tree and appends its batch, or says why not (under the lock).
    private func decide(_ write: Write, _ state: inout State) -> (any Error)? {
        switch state.writes.admit(write) {
        case .refuse:
            return StorageError(
                .abortedAfterFailure,
                "an earlier write failed to commit to \(engine.location) and writes queued behind it are draining. Retry.")
        case .wait: return nil
        case .decide: break
        }
        if let id = write.writeID, state.remoteWriteIDs.contains(id) { return AppliedElsewhere() }
        let targets = write.targets
        // What storage holds above the written paths, read before the write without keeping the
        // old root: holding it would make the write copy every node on its path.
        let ancestors = WriteBatch.AncestorRecords(of: targets, in: state.pending.root)
        let context = Self.context(of: write, in: state.pending.root)
        let changes: ChangeSet
        if let check = write.check {
            // Tried on a copy, kept only when allowed (the copy costs the nodes on the write's path).
            var trial = state.pending
            do { changes = try write.apply(&trial) } catch { return error }
            if let denied = check(targets, state.pending.root, trial.root) { return denied }
            if let (path, hash) = write.ifHash, state.pending.root.child(at: path).hash != hash {
                return DataError(.hashMismatch, "Transaction hash does not match")
            }
            state.pending = trial
        } else {
            do { changes = try write.apply(&state.pending) } catch { return error }
        }
        accept(write, changes, ancestors, context, &state)
        return nil
    }

    /// The earlier values of the locations above a write that its feed note asks for (triggers watch
    /// them), read before the write changes them; none for most writes.
    private static func context(of write: Write, in root: Node) -> [ChangeFeedValue] {
        guard let contexts = write.feed?.contexts, !contexts.isEmpty else { return [] }
        return contexts.map { ChangeFeedValue(path: $0, value: root.child(at: $0)) }
    }

    /// A write applied to `pending`: counted, and its batch appended to the engine (under the lock, so
    /// the engine sees batches in the order `pending` applied them).
    private func accept(
        _ write: Write, _ changes: ChangeSet, _ ancestors: WriteBatch.AncestorRecords, _ context: [ChangeFeedValue], _ state: inout State
    ) {
        state.pendingVersion &+= 1
        let targets = write.targets
        var batch = WriteBatch(changes: changes, ancestorsBefore: ancestors, after: state.pending.root)
        batch.carriesOut = write.carriesOut
        batch.writeID = write.writeID
        if let id = write.writeID { state.writeIDsInFlight.insert(id) }
        if let note = write.feed {
            batch.feed = ChangeFeedEntry(note: note, changes: changes, context: context, beforeBytesMax: feedBeforeBytesMax)
        }
        state.writes.appended(decidedOn: write.check == nil ? Self.footprint(of: targets, batch, ancestors) : nil)
        // Appended under the lock, so the engine sees batches in the order `pending` applied them.
        engine.append(batch) { [self] result in
            guard let finisher else { return finish(write, changes, result) }
            // A failure stops new writes now, on the engine's thread: the engine accepts batches again
            // as soon as this returns (see StorageEngine), and a write taken before the finisher runs
            // would build on the failed one and be stored. A superseded write is decided again instead.
            if case .failure(let error) = result {
                self.state.withLock { state in state.writes.stop(Self.outcome(of: .failure(error), following: state.onRemote != nil)) }
            }
            finisher { self.finish(write, changes, result) }
        }
    }

    /// Moves a batch's changes into the committed tree and tells its writer; records a failure; keeps a
    /// superseded write to decide again. Once nothing is in flight, a pending tree that holds writes
    /// that will never be durable, or lacks remote commits, is rebuilt from the committed one.
    private func finish(_ write: Write, _ changes: ChangeSet, _ result: Result<Void, StorageError>) {
        var answers: [(Write, Result<CommittedWrite, any Error>)] = []
        state.withLock { state in
            let outcome = Self.outcome(of: result, following: state.onRemote != nil)
            state.writes.finished(write, outcome)
            if let id = write.writeID { state.writeIDsInFlight.remove(id) }
            switch result {
            case .failure(let error):
                if outcome == .failed { answers.append((write, .failure(error))) }
            case .success:
                // Validated and resolved on the pending tree already: applied without checking again.
                var applied = changes
                for index in applied.changes.indices {
                    applied.changes[index] = state.committed.apply(validated: applied.changes[index])
                }
                answers.append((write, .success(CommittedWrite(changes: applied, root: state.committed.root))))
            }
            answers += settle(&state)
        }
        for (write, answer) in answers { write.completion(answer) }
    }

    /// A batch's result as the write queue sees it: a superseded batch is decided again only when
    /// following other servers (otherwise nothing can supersede it, and it is a failure).
    private static func outcome(of result: Result<Void, StorageError>, following: Bool) -> WriteQueue<Write>.Outcome {
        switch result {
        case .success: .durable
        case .failure(let error) where error.code == .superseded && following: .superseded
        case .failure: .failed
        }
    }

    /// When the write queue says the pending tree can be rebuilt (see ``WriteQueue/settle()``): rebuilds
    /// it from the committed tree and decides the waiting writes again. Returns the writes refused.
    private func settle(_ state: inout State) -> [(Write, Result<CommittedWrite, any Error>)] {
        guard let waiting = state.writes.settle() else { return [] }
        state.pending = DatabaseTree(root: state.committed.root)
        state.pendingVersion &+= 1
        var refused: [(Write, Result<CommittedWrite, any Error>)] = []
        for write in waiting {
            guard let error = decide(write, &state) else { continue }
            // Settled once every remote commit is in the committed tree: one that applied it is there.
            let applied = CommittedWrite(changes: ChangeSet(), root: state.committed.root, appliedElsewhere: true)
            refused.append((write, error is AppliedElsewhere ? .success(applied) : .failure(error)))
        }
        return refused
    }

    // MARK: Following other servers

    /// Follows what other servers commit to the namespace, when the engine is one they share
    /// (``FollowingStorageEngine``, PostgreSQL): their commits reach the committed tree in the
    /// namespace's commit order, and `onRemote` hears of each of their writes once it is there (where
    /// `finishOn` runs completions). Writes decided on a tree without them are decided again. False when
    /// the engine has no other writers; call it once, before the first write, after loading the tree
    /// from the engine.
    @discardableResult
    public func follow(_ onRemote: @escaping @Sendable (RemoteWrite) -> Void) -> Bool {
        guard let engine = engine as? any FollowingStorageEngine else { return false }
        state.withLock { $0.onRemote = onRemote }
        engine.follow { [weak self] remote in self?.receive(remote) ?? false }
        return true
    }

    /// Whether other servers write the namespace too (``follow(_:)`` found an engine they share).
    public var isFollowing: Bool { state.withLock { $0.onRemote != nil } }

    /// Runs `body` once every commit the engine's database holds now is in the committed tree (where
    /// completions finish): a read then sees every write another server acknowledged before it, as a
    /// REST client sent round-robin across nodes expects. With a failure when the engine could not read
    /// what the others committed (PostgreSQL unreachable): the tree may then lack some of it. At once
    /// when nothing is followed.
    public func catchUp(then body: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        guard isFollowing, let engine = engine as? any FollowingStorageEngine else { return body(.success(())) }
        // On the completion queue after the catch-up's commits were handed over; finished after them.
        engine.catchUp { [finisher] result in
            guard let finisher else { return body(result) }
            finisher { body(result) }
        }
    }

    /// On the engine's completion queue. When the remote commit overlaps nothing the writes in flight
    /// were decided on, they commute with it: it goes into the pending tree at once, and they keep their
    /// batches (true: the engine commits them after it). Otherwise new writes wait from now on, and the
    /// engine supersedes the ones appended before this returns (false). Either way, where completions
    /// finish, the commit is then applied to the committed tree.
    private func receive(_ remote: RemoteCommit) -> Bool {
        let absorbed = state.withLock { state in
            // A write of this server's in flight that another server applied already (a resend) must
            // not commit after it: it is superseded and decided again, and found applied.
            var resent = false
            for id in Self.writeIDs(of: remote) {
                state.remoteWriteIDs.insert(id)
                resent = resent || state.writeIDsInFlight.contains(id)
            }
            guard state.writes.remoteArrived(writing: resent ? nil : Self.locations(of: remote)) else { return false }
            for write in Self.writes(of: remote) { _ = Self.apply(write, to: &state.pending) }
            state.pendingVersion &+= 1
            return true
        }
        let apply: @Sendable () -> Void = { [self] in
            var answers: [(Write, Result<CommittedWrite, any Error>)] = []
            let (published, onRemote) = state.withLock { state in
                let published = Self.writes(of: remote).map { Self.apply($0, to: &state.committed) }
                state.writes.remoteApplied()
                answers = settle(&state)
                return (published, state.onRemote)
            }
            for write in published { onRemote?(write) }
            for (write, answer) in answers { write.completion(answer) }
        }
        if let finisher { finisher(apply) } else { apply() }
        return absorbed
    }

    /// What a write without a check was decided on, and what its batch depends on. Its own locations
    /// (values, hashes, increments there; a `.priority` key stands for its node, which an update of it
    /// rewrites whole); every location its batch writes (an ancestor whose record goes or comes); and the
    /// ancestors that hold a record (a leaf, a priority marker), whose record stays or goes with the
    /// children they have left, which the write did not name.
    private static func footprint(of targets: [Path], _ batch: WriteBatch, _ ancestors: WriteBatch.AncestorRecords) -> [Path] {
        var paths = targets.map { $0.last == .priorityKey ? ($0.parent ?? $0) : $0 }
        paths += batch.operations.map(\.path)
        paths += ancestors.records.map(\.path)
        return paths
    }

    /// The locations another server's commit wrote; nil for a snapshot, which replaced everything.
    private static func locations(of remote: RemoteCommit) -> [Path]? {
        guard case .batches(let batches) = remote else { return nil }
        return batches.flatMap { $0.operations.map(\.path) }
    }

    /// The write IDs of another server's commit's writes.
    private static func writeIDs(of remote: RemoteCommit) -> [String] {
        switch remote {
        case .batches(let batches): batches.compactMap(\.writeID)
        case .snapshot(_, let writeIDs): writeIDs
        }
    }

    /// Another server's commit as the writes to apply and announce one by one, so that listeners hear
    /// each write as the writer's own server's listeners do (not only the last of several at one place).
    private static func writes(of remote: RemoteCommit) -> [RemoteCommit] {
        guard case .batches(let batches) = remote, batches.count > 1 else { return [remote] }
        return batches.filter { !$0.isEmpty }.map { .batches([$0]) }
    }

    /// Applies another server's commit to `tree`: each outermost location it wrote gets its value from
    /// the records after the commit (`Node.applying`, which is how the records change), so the tree
    /// ends exactly as the records do; an inner node whose priority the records kept gets it back.
    private static func apply(_ remote: RemoteCommit, to tree: inout DatabaseTree) -> RemoteWrite {
        let before = tree.root
        let after: Node
        var locations: [Path]
        switch remote {
        case .batches(let batches):
            after = batches.reduce(before) { $0.applying($1) }
            locations = Path.outermost(batches.flatMap { $0.operations.map(\.path) })
        case .snapshot(let root, _):
            after = root
            locations = [.root]
        }
        var changes = ChangeSet()
        for location in locations {
            changes.changes.append(tree.apply(validated: ChangeSet.Change(path: location, old: before.child(at: location), new: after.child(at: location))))
        }
        // Priorities of inner nodes above the locations that the records kept (see Node.applying).
        for location in locations {
            var ancestor = location
            while let parent = ancestor.parent {
                ancestor = parent
                let wanted = after.child(at: ancestor)
                if tree.root.child(at: ancestor).priority != wanted.priority {
                    changes.changes.append(tree.apply(validated: ChangeSet.Change(path: ancestor, old: tree.root.child(at: ancestor), new: wanted)))
                    if !locations.contains(ancestor) { locations.append(ancestor) }
                }
            }
        }
        return RemoteWrite(changes: changes, root: tree.root, locations: locations)
    }

    /// Runs `body` once every write appended so far is durable or has failed and is in the committed
    /// tree (where `finishOn` runs completions). An empty batch is the barrier: the engine completes
    /// batches in the order they were appended.
    public func afterWritesInFlight(_ body: @escaping @Sendable () -> Void) {
        state.withLock { _ in
            engine.append(WriteBatch(operations: [])) { [finisher] _ in
                guard let finisher else { return body() }
                finisher(body)
            }
        }
    }

    /// Waits until every write appended so far is durable or has failed (``afterWritesInFlight(_:)``).
    public func waitForPendingWrites() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            afterWritesInFlight { continuation.resume() }
        }
    }
}
