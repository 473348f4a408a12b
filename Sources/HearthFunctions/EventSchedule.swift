import HearthCore
import HearthTriggers

/// Which events run when, as a value (the runner acts on its answers): one at a time per location, in
/// feed order, any number of locations at once; and the cursor, the last feed position all of whose
/// events are done (handled, or parked). A functions process restarted from the cursor hands out again
/// only events that may not have finished.
struct EventSchedule {
    /// One event for one function, and how many times it was tried.
    struct Job: Sendable {
        var function: Int
        var event: TriggerEvent
        var attempts = 0
    }

    /// Every entry through this position is done.
    private(set) var cursor: Int64
    /// Events received and not yet done.
    private(set) var buffered = 0

    private var waiting: [Path: FIFO<Job>] = [:]
    /// Locations with an event waiting and none running, in the order they became so.
    private var ready = FIFO<Path>()
    private var running = Set<Path>()
    /// Entries received after the cursor, oldest first, with how many of their events are not done.
    private var entries: [(position: Int64, left: Int)] = []
    private var entriesStart = 0

    init(cursor: Int64) { self.cursor = cursor }

    /// An entry's events (none is fine: the cursor then passes it once those before are done).
    mutating func receive(position: Int64, jobs: [Job]) {
        guard position > (entries.last?.position ?? cursor) else { return }  // read again after a reconnection
        entries.append((position, jobs.count))
        buffered += jobs.count
        for job in jobs {
            let location = job.event.location
            if waiting[location] == nil && !running.contains(location) { ready.append(location) }
            waiting[location, default: FIFO()].append(job)
        }
        advance()
    }

    /// The next event to run, its location now busy; nil when none may start.
    mutating func next() -> Job? {
        guard let location = ready.pop() else { return nil }
        guard var queue = waiting.removeValue(forKey: location), let job = queue.pop() else { return nil }
        if !queue.isEmpty { waiting[location] = queue }
        running.insert(location)
        return job
    }

    /// `job` is done (its handler returned, or it was parked): its location may run its next event.
    mutating func finish(_ job: Job) {
        let location = job.event.location
        running.remove(location)
        if waiting[location] != nil { ready.append(location) }
        buffered -= 1
        if let index = entryIndex(job.event.position) { entries[index].left -= 1 }
        advance()
    }

    private func entryIndex(_ position: Int64) -> Int? {
        var low = entriesStart
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].position < position { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].position == position ? low : nil
    }

    private mutating func advance() {
        while entriesStart < entries.count && entries[entriesStart].left == 0 {
            cursor = entries[entriesStart].position
            entriesStart += 1
        }
        if entriesStart > 4096 && entriesStart * 2 > entries.count {
            entries.removeFirst(entriesStart)
            entriesStart = 0
        }
    }
}

/// A first-in first-out list whose pops are O(1), amortised.
struct FIFO<Element> {
    private var items: [Element] = []
    private var head = 0

    var isEmpty: Bool { head >= items.count }

    mutating func append(_ item: Element) { items.append(item) }

    mutating func pop() -> Element? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}
