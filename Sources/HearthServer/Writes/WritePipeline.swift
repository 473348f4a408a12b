import HearthCore
import HearthProtocol
import HearthStorage
import HearthSupport

/// The one path every write takes, whichever protocol sent it (REST, realtime, onDisconnect):
/// authorise (the caller's rules, a compare-and-set's hash) → apply to the namespace's tree → commit
/// on the storage thread → back on the loop, fan out to every stream and listen it reaches → answer.
///
/// Listeners are told before the writer is answered, so a writer that also listens holds the new
/// value when its write is acknowledged (docs/protocol.md §3.2). A stale compare-and-set is answered
/// only once every write queued before it has committed and been fanned out: the client then holds
/// the value that made its hash stale when it retries (§2.6). Loop thread only.
final class WritePipeline {
    typealias Outcome = Result<Node, WriteFailure>

    private let clock: () -> Int64
    private let metrics: ServerMetrics?
    var executor: (any LoopExecutor)?
    /// Where a namespace's writes starting to fail in storage, and working again, are said.
    var log: Log?
    /// Writes between their apply and their completion on the loop.
    private let committing = CommittingWrites()

    init(clock: @escaping () -> Int64, metrics: ServerMetrics? = nil) {
        self.clock = clock
        self.metrics = metrics
    }

    /// Whether writes are on their way to storage: the transport holds a large fan-out's flush for them
    /// (see HTTPHandler.hasOutputComing).
    var hasWritesCommitting: Bool { committing.count > 0 }

    /// Makes `operation` as `caller` in `namespace`; `answer` runs on the loop with the tree after the
    /// write, or why it was not made. An update removes the ledger entries it is `carryingOut` in its
    /// commit (a dead node's claimed onDisconnect operations, ``OnDisconnectLedger``). A write its client
    /// gave an ID (`writeID`) is made once however often it is sent (``RememberedWrites``).
    func submit(
        _ operation: WriteOperation, by caller: Caller, in namespace: Namespace, from channel: ServerMetrics.Channel,
        writeID: String? = nil, carryingOut: [LedgerEntry] = [], attempt: Int = 0, answer: @escaping (Outcome) -> Void
    ) {
        let original = answer
        guard let executor else { return answer(.failure(.storage("The server is not running"))) }
        executor.assertOnLoop("WritePipeline.submit")
        let metrics = metrics
        // A resend of a write applied already, or still in flight, is answered as that write was, and
        // not applied again. A write decided again (`attempt` > 0) was admitted the first time.
        if let writeID, attempt == 0 {
            switch namespace.rememberedWrites.admit(writeID, waiter: original) {
            case .apply: break
            case .applied:
                metrics?.countResentWrite()
                return original(.success(namespace.database.root))
            case .waiting:
                metrics?.countResentWrite()
                return
            }
        }
        let answer: (Outcome) -> Void = { outcome in
            switch outcome {
            case .success: metrics?.countWrite(channel)
            case .failure(let failure): metrics?.countWriteFailure(failure)
            }
            answer(outcome)
            guard let writeID else { return }
            let applied = if case .success = outcome { true } else { false }
            for resend in namespace.rememberedWrites.finished(writeID, applied: applied) { resend(outcome) }
        }
        let now = clock()
        let database = namespace.database, committing = committing
        // Served namespaces finish their writes on the loop (NamespaceRegistry.adopt): completions run
        // there, with no second hop.
        precondition(database.finisher != nil, "a served namespace's writes finish on the loop")
        let check = namespace.writeCheck(caller, now: now)
        // A compare-and-set refused on a value that an earlier write in flight made, which then did not
        // commit, is decided again rather than answered stale (a refusal must rest on committed data).
        var reconsider: FinishingWrite.Reconsider?
        if case .set(let path, _, let ifHash?) = operation {
            let again: (() -> Void)? = attempt < Self.staleReconsiderationsMax ? { [weak self] in
                self?.submit(
                    operation, by: caller, in: namespace, from: channel, writeID: writeID, carryingOut: carryingOut, attempt: attempt + 1,
                    answer: original)
            } : nil
            reconsider = FinishingWrite.Reconsider(path: path, hash: ifHash, again: again)
        }
        let finishing = FinishingWrite(
            namespace: namespace, shape: operation.shape, reconsider: reconsider, metrics: metrics, log: log, answer: answer)
        let completion: @Sendable (Result<DurableDatabase.CommittedWrite, any Error>) -> Void = { result in
            executor.assertOnLoop("a commit's completion")
            committing.finished()
            finishing.finish(result)
        }
        committing.started()
        var feed = operation.feedNote(by: caller, over: channel, at: now)
        if !namespace.triggerPatterns.isEmpty { feed.contexts = namespace.triggerPatterns.contexts(of: operation.shape.locations) }
        switch operation {
        case .set(let path, let value, let ifHash):
            let check = namespace.compareAndSetCheck(check, caller: caller, at: path, ifHash: ifHash, now: now)
            database.set(path, to: value, ifHash: ifHash, now: now, check: check, feed: feed, writeID: writeID, completion: completion)
        case .update(let path, let values):
            database.update(
                path, with: values, now: now, check: check, carriesOut: carryingOut, feed: feed, writeID: writeID, completion: completion)
        }
    }

    /// Counts a storage failure by its code, and says in the log when a namespace's writes start failing
    /// in storage (the first failure of a run, with its message: what to do) and when they work again.
    fileprivate static func noteStorage(_ result: Result<DurableDatabase.CommittedWrite, any Error>, in namespace: Namespace, metrics: ServerMetrics?, log: Log?) {
        switch result {
        case .success:
            noteCheckpoints(in: namespace, log: log)
            guard namespace.failingWrites > 0 else { return }
            log?("hearth: writes to '\(namespace.name)' are stored again (\(namespace.failingWrites) failed in storage meanwhile).")
            namespace.failingWrites = 0
        case .failure(let error as StorageError) where error.code != .superseded:
            metrics?.countStorageError(error.code)
            namespace.failingWrites += 1
            if namespace.failingWrites == 1 { log?("hearth: writes to '\(namespace.name)' are failing in storage (\(error.code.rawValue)): \(error.message)") }
        case .failure:
            break
        }
    }

    /// Says in the log when a namespace's checkpoints (its storage copying its write-ahead log into its
    /// file, which commits trigger) start failing, and when they work again. Nothing is lost meanwhile,
    /// but the log grows until the disk fills.
    private static func noteCheckpoints(in namespace: Namespace, log: Log?) {
        let now = namespace.database.engine.checkpointFailures
        guard now != namespace.checkpoints else { return }
        if let failing = now.failing, namespace.checkpoints.failing == nil {
            log?("hearth: checkpoints of '\(namespace.name)' are failing (\(failing)): nothing is lost, but the write-ahead log grows until one works. Check the disk holding \(namespace.database.engine.location).")
        } else if now.failing == nil, namespace.checkpoints.failing != nil {
            log?("hearth: checkpoints of '\(namespace.name)' work again (\(now.count) failed).")
        }
        namespace.checkpoints = now
    }

    /// How many times one compare-and-set is decided again because the value it was refused on never
    /// committed; after that it is answered stale.
    static let staleReconsiderationsMax = 3

    /// A write waiting for its commit; carried to the loop by the completion and touched only there.
    private final class FinishingWrite: @unchecked Sendable {
        /// A compare-and-set's location and expected hash, and how to decide it again (nil once it was
        /// decided again as often as it may be).
        struct Reconsider {
            let path: Path
            let hash: String
            let again: (() -> Void)?
        }

        let namespace: Namespace
        let shape: Write
        let reconsider: Reconsider?
        let metrics: ServerMetrics?
        let log: Log?
        let answer: (Outcome) -> Void

        init(
            namespace: Namespace, shape: Write, reconsider: Reconsider?, metrics: ServerMetrics?, log: Log?,
            answer: @escaping (Outcome) -> Void
        ) {
            self.namespace = namespace
            self.shape = shape
            self.reconsider = reconsider
            self.metrics = metrics
            self.log = log
            self.answer = answer
        }

        func finish(_ result: Result<DurableDatabase.CommittedWrite, any Error>) {
            WritePipeline.noteStorage(result, in: namespace, metrics: metrics, log: log)
            switch result {
            case .success(let committed) where committed.appliedElsewhere:
                // A resend of a write another server of the cluster applied: its listeners heard of it then.
                metrics?.countResentWrite()
                answer(.success(committed.root))
            case .success(let committed):
                namespace.publish(CommittedChange(write: shape, root: committed.root, changes: committed.changes))
                answer(.success(committed.root))
            case .failure(let error):
                let failure = WriteFailure(error)
                guard failure == .stale else { return answer(.failure(failure)) }
                // A stale transaction is answered once the writes before it are in the committed tree,
                // so the client's retry reads the data it lost to (on the loop, by the finisher). If the
                // committed value is what it expected after all (the value it was refused on came from a
                // write that failed), it is decided again instead.
                namespace.database.afterWritesInFlight {
                    guard let reconsider = self.reconsider, self.namespace.database.root.child(at: reconsider.path).hash == reconsider.hash else {
                        return self.answer(.failure(.stale))
                    }
                    // Never a 412 while the value it expected is the committed one: decided again, or, when
                    // the writes before it keep failing, an error that says it was not decided.
                    guard let again = reconsider.again else {
                        return self.answer(.failure(.storage(
                            "The compare-and-set was not decided: the value it expects is current, but writes queued before it kept failing in storage. Retry.")))
                    }
                    again()
                }
            }
        }
    }
}

/// Writes applied and handed to storage whose completion has not yet run on the loop. Loop thread only
/// (the completions that count down run there); a class so write completions can carry it.
final class CommittingWrites: @unchecked Sendable {
    private(set) var count = 0

    func started() { count += 1 }
    func finished() { count -= 1 }
}
