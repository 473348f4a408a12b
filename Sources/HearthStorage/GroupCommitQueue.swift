/// What a ``GroupCommitThread`` decides, as a value: the batches and exclusive jobs waiting in order,
/// which group goes into the next commit, and which batches must fail instead of committing. The
/// thread is the shell around it: it holds this under its lock, waits, commits and runs completions.
///
/// Sequences: every appended batch gets the next number. Two watermarks make batches fail without a
/// commit (the ordering rule of ``StorageEngine``): `abortThrough` after a failed commit (those batches
/// were built on the failed writes), `supersedeThrough` after another server's commit the database could
/// not take in beneath them (they are decided again).
struct GroupCommitQueue<Completion, Exclusive> {
    enum Job {
        case batch(sequence: Int, WriteBatch, Completion)
        case exclusive(Exclusive)
    }

    typealias Queued = (sequence: Int, batch: WriteBatch, completion: Completion)

    /// What the next turn of the storage thread does.
    struct Turn {
        var group: [Queued] = []
        var exclusive: Exclusive?
    }

    /// A group split by the watermarks: in sequence order, the aborted come first, then the superseded,
    /// then what is committed.
    struct Split {
        var aborted: ArraySlice<Queued>
        var superseded: ArraySlice<Queued>
        var toCommit: ArraySlice<Queued>
    }

    private var jobs: [Job] = []
    private var start = 0
    private(set) var closing = false
    /// Batches appended so far (the last sequence given).
    private(set) var appended = 0
    private(set) var abortThrough = 0
    private(set) var supersedeThrough = 0

    var isEmpty: Bool { start == jobs.count }
    var count: Int { jobs.count - start }

    /// Queues a batch; false once closing (the caller fails it as closed).
    mutating func append(_ batch: WriteBatch, _ completion: Completion) -> Bool {
        guard !closing else { return false }
        appended += 1
        jobs.append(.batch(sequence: appended, batch, completion))
        return true
    }

    /// Queues work that needs the committer between commits; false once closing.
    mutating func append(exclusive: Exclusive) -> Bool {
        guard !closing else { return false }
        jobs.append(.exclusive(exclusive))
        return true
    }

    /// No more appends; what is queued still commits. True when it was not closing yet.
    mutating func close() -> Bool {
        defer { closing = true }
        return !closing
    }

    /// A commit failed: everything appended until its writers heard of it fails too.
    mutating func abortAppended() { abortThrough = appended }

    /// The database could not take another server's commit in beneath the batches appended so far:
    /// they are decided again.
    mutating func supersedeAppended() { supersedeThrough = appended }

    /// The next turn: up to `max` batches in order, or one exclusive job when it comes first.
    mutating func take(max: Int) -> Turn {
        var turn = Turn()
        while start < jobs.count, turn.group.count < max {
            switch jobs[start] {
            case .batch(let sequence, let batch, let completion):
                turn.group.append((sequence, batch, completion))
                start += 1
            case .exclusive(let job):
                guard turn.group.isEmpty else { return compacted(turn) }
                turn.exclusive = job
                start += 1
                return compacted(turn)
            }
        }
        return compacted(turn)
    }

    private mutating func compacted(_ turn: Turn) -> Turn {
        if start == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096 {
            jobs.removeFirst(start)
            start = 0
        }
        return turn
    }

    /// Splits a group taken by ``take(max:)`` by the watermarks as they are now (read after any
    /// catch-up, so batches it superseded fail rather than commit).
    func split(_ group: [Queued]) -> Split {
        let aborted = group.prefix { $0.sequence <= abortThrough }
        let rest = group[aborted.count...]
        let superseded = rest.prefix { $0.sequence <= supersedeThrough }
        return Split(aborted: aborted, superseded: superseded, toCommit: rest.dropFirst(superseded.count))
    }
}
