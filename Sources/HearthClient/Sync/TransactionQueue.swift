import HearthCore

/// Which transactions run, retry, give up or wait (Firebase's transactions, docs/swift-sdk.md): a value
/// the ``Repo`` asks and acts on, as the server's `OnDisconnectQueue` is, so that its rules are tested
/// without a server.
///
/// Transactions whose locations overlap run one at a time, in the order they were started: the next one
/// runs its block on the value the previous one left (so ten increments of one counter from one client
/// are ten rounds, not ten compare-and-sets racing each other). A run whose compare-and-set the server
/// refuses (`datastale`) or that lost its connection runs again, up to ``retriesMax`` times; a set or
/// update overlapping a transaction aborts it (`set`), at once when it waits or is not sent, on its
/// answer when it is.
struct TransactionQueue {
    /// Firebase's limit on a transaction's runs (`maxretry` after it).
    static let retriesMax = ClientLimits.transactionRetriesMax

    struct Entry: Equatable {
        let id: Int64
        let path: Path
        var retries = 0
        /// Sent and not yet answered.
        var inFlight = false
        /// Has run at least once (its block ran: its write is pending in the tree).
        var started = false
        /// A set or update overlapped it while it was in flight: it ends with `set` on its answer.
        var abortedBySet = false
    }

    /// What the repo does.
    enum Step: Equatable {
        /// Run the transaction's block on the current value, then send it (or end it, by the block's answer).
        case run(Int64)
        /// The server took the write.
        case committed(Int64)
        /// It ends without committing, for `status` (`set`, `maxretry`, or the server's refusal).
        case failed(Int64, status: String, acknowledged: Bool)
    }

    private(set) var entries: [Entry] = []

    /// The transactions waiting behind others.
    var waiting: [Int64] { entries.filter { !$0.started }.map(\.id) }

    /// A new transaction at `path`: it runs now unless an earlier one overlaps it.
    mutating func add(_ id: Int64, at path: Path) -> [Step] {
        entries.append(Entry(id: id, path: path))
        return startable()
    }

    /// The transaction's block ran and its write was sent.
    mutating func sent(_ id: Int64) {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return }
        entries[index].inFlight = true
        entries[index].started = true
    }

    /// The block ended it (aborted, or invalid data): it is gone, and the next may run.
    mutating func ended(_ id: Int64) -> [Step] {
        entries.removeAll { $0.id == id }
        return startable()
    }

    /// The server answered the transaction's write with `status`.
    mutating func answered(_ id: Int64, status: String) -> [Step] {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return [] }
        entries[index].inFlight = false
        let entry = entries[index]
        if entry.abortedBySet { return finish(id, .failed(id, status: "set", acknowledged: status == "ok")) }
        if status == "ok" { return finish(id, .committed(id)) }
        guard status == "datastale" || status == "disconnect" else {
            return finish(id, .failed(id, status: status, acknowledged: false))
        }
        entries[index].retries += 1
        guard entries[index].retries < Self.retriesMax else { return finish(id, .failed(id, status: "maxretry", acknowledged: false)) }
        return [.run(id)]
    }

    /// A set or update at `path`: overlapping transactions in flight end on their answer; the others
    /// (waiting, or run but not sent) end now.
    mutating func set(at path: Path) -> [Step] {
        var steps: [Step] = []
        for entry in entries where entry.path.overlaps(path) {
            guard let index = entries.firstIndex(where: { $0.id == entry.id }) else { continue }
            if entry.inFlight {
                entries[index].abortedBySet = true
            } else {
                entries.remove(at: index)
                steps.append(.failed(entry.id, status: "set", acknowledged: false))
            }
        }
        return steps + startable()
    }

    /// Every transaction ends (the app purged its writes): each fails with `status`.
    mutating func cancelAll(status: String) -> [Step] {
        defer { entries = [] }
        return entries.map { .failed($0.id, status: status, acknowledged: false) }
    }

    private mutating func finish(_ id: Int64, _ step: Step) -> [Step] {
        entries.removeAll { $0.id == id }
        return [step] + startable()
    }

    /// The transactions that may start now: those not started with no started or earlier one overlapping.
    private mutating func startable() -> [Step] {
        var steps: [Step] = []
        for (index, entry) in entries.enumerated() where !entry.started {
            let blocked = entries[..<index].contains { $0.path.overlaps(entry.path) }
            if !blocked {
                entries[index].started = true
                steps.append(.run(entry.id))
            }
        }
        return steps
    }
}
