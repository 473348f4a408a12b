import HearthCore

/// What a ``DurableDatabase`` decides about the fate of its writes between their decision and their
/// durability, as a value: whether a new write may be decided now, must wait, or is refused; what the
/// writes in flight were decided on; and when the pending tree must be rebuilt from the committed one
/// and the waiting writes decided again. The database is the shell: it holds this under its lock beside
/// its two trees, applies writes, appends batches and tells writers.
///
/// Two things stop new writes from being decided on the pending tree:
/// - *failed*: a commit failed, so the pending tree holds writes that will never be durable. New writes
///   are refused (``StorageError/Code/abortedAfterFailure``) until the writes in flight have drained.
/// - *behind*: another server's commit reached storage that the pending tree lacks (the cluster). New
///   writes wait, and so do the ones storage superseded; once nothing is in flight and every remote
///   commit handed over is in the committed tree, all of them are decided again, oldest first.
///
/// `Write` is whatever the database keeps to decide a write again (a closure and its completion); tests
/// use plain values.
struct WriteQueue<Write> {
    /// What to do with a write asked for now.
    enum Admission: Equatable {
        /// Decide it on the pending tree.
        case decide
        /// Kept: it is decided again once the tree is caught up (``settle()``).
        case wait
        /// An earlier commit failed and writes queued behind it are draining.
        case refuse
    }

    /// How a batch in flight ended.
    enum Outcome: Equatable {
        case durable
        case failed
        /// Another server committed first and the database could not take that in beneath it.
        case superseded
    }

    /// Batches appended whose completion has not run yet.
    private(set) var inFlight = 0
    /// What each batch in flight was decided on, oldest first from `readsStart`: its locations, or nil
    /// when its decision may have read anywhere (security rules).
    private var reads: [[Path]?] = []
    private var readsStart = 0
    private(set) var failed = false
    private(set) var behind = false
    /// Writes storage superseded, oldest first, then the writes asked for while behind.
    private var superseded: [Write] = []
    private var queued: [Write] = []
    /// Remote commits handed over and not yet applied to the committed tree: until then the pending tree
    /// cannot be caught up.
    private(set) var remoteUnapplied = 0

    /// Whether a write decided now on the pending tree would build on data that will exist.
    var decidesNow: Bool { !failed && !behind }

    /// A write is asked for: decide it, keep it for later, or refuse it.
    mutating func admit(_ write: Write) -> Admission {
        if failed { return .refuse }
        if behind {
            queued.append(write)
            return .wait
        }
        return .decide
    }

    /// A decided write's batch went to the engine; `reads` is what its decision read (nil: anywhere).
    mutating func appended(decidedOn reads: [Path]?) {
        inFlight += 1
        self.reads.append(reads)
    }

    /// The engine told a batch's fate before its completion finished (on the storage thread): new writes
    /// stop at once, since the engine accepts batches again as soon as it has told.
    mutating func stop(_ outcome: Outcome) {
        switch outcome {
        case .durable: break
        case .failed: failed = true
        case .superseded: behind = true
        }
    }

    /// The oldest batch in flight finished (batches finish in the order they were appended). A superseded
    /// write is kept to be decided again; the caller tells the others' writers.
    mutating func finished(_ write: Write, _ outcome: Outcome) {
        precondition(inFlight > 0, "a batch finished that was never appended")
        inFlight -= 1
        readsStart += 1
        if readsStart == reads.count {
            reads.removeAll(keepingCapacity: true)
            readsStart = 0
        } else if readsStart >= 1024 {
            reads.removeFirst(readsStart)
            readsStart = 0
        }
        stop(outcome)
        if outcome == .superseded { superseded.append(write) }
    }

    /// Another server's commit was handed over, writing `locations` (nil: a snapshot replacing
    /// everything). True when it commutes with every write in flight: no write in flight was decided on a
    /// location it wrote, above or below, so storing them after it gives what deciding them again would.
    /// The caller then applies it to the pending tree at once; otherwise new writes wait from now on.
    /// Either way it is counted until ``remoteApplied()``.
    mutating func remoteArrived(writing locations: [Path]?) -> Bool {
        remoteUnapplied += 1
        if decidesNow && commutes(locations) { return true }
        behind = true
        return false
    }

    /// A remote commit handed over is in the committed tree now.
    mutating func remoteApplied() {
        precondition(remoteUnapplied > 0, "a remote commit was applied that was never handed over")
        remoteUnapplied -= 1
    }

    /// With nothing in flight and every remote commit applied, a failed or stale pending tree can be
    /// rebuilt: returns the writes to decide again on it, oldest first (superseded, then queued), and
    /// decides normally from now on. Nil while it cannot be rebuilt yet, or need not be. (A write that
    /// finishes between a remote commit's hand-over and its application must not catch the tree up yet:
    /// writes decided on it would lack that commit.)
    mutating func settle() -> [Write]? {
        guard inFlight == 0, remoteUnapplied == 0, failed || behind else { return nil }
        failed = false
        behind = false
        defer {
            superseded = []
            queued = []
        }
        return superseded + queued
    }

    private func commutes(_ locations: [Path]?) -> Bool {
        let inFlight = reads[readsStart...]
        guard let locations else { return inFlight.isEmpty }
        if inFlight.isEmpty { return true }
        let written = WrittenLocations(locations)
        if written.isEmpty { return true }
        for read in inFlight {
            guard let read else { return false }
            if read.contains(where: written.overlaps) { return false }
        }
        return true
    }
}

extension WriteQueue: Sendable where Write: Sendable {}
