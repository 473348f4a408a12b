import HearthCore
import HearthStorage
import HearthTriggers

/// How a history request walks the change feed newest first (docs/feed.md, "History of a location"),
/// decided as a value: the feed reads forward only, so the scan first learns where the feed ends, then
/// reads a window of commits below its cursor, forward, looks at the window's entries from the newest
/// back, and moves the window down until it has `limit` changes, reaches the oldest entry retention
/// kept, or has looked at `budget` entries or made `readsMax` reads (then it answers with where to go
/// on from). A window too dense to read in `windowReadsMax` reads (commits of thousands of writes) is
/// read again as fewer commits, down to one, so that a request never answers from a window it has read
/// only the older part of, and every request gets past the commit it starts below.
struct HistoryScan {
    let location: Path
    let limit: Int
    let budget: Int
    /// Entries before this position are still to look at; nil until the feed's end is known.
    private(set) var cursor: Int64?
    private(set) var found: [LocationChange] = []
    private(set) var scanned = 0
    private(set) var trimmedThrough: Int64 = 0
    private var reads = 0
    private let readsMax: Int
    /// The window being read: its first commit, how many commits it spans, its entries read so far
    /// (ascending) and the reads that took.
    private var windowStart: Int64 = 0
    private var windowCommits = Self.windowCommitsMax
    private var window: [ChangeFeedPage.Entry] = []
    private var windowReads = 0
    /// Where the caller asked to start (`before`), exclusive.
    private let before: Int64

    /// Commits a window spans at first; entries read per page; reads one request makes at most.
    static let windowCommitsMax: Int64 = 256
    static let pageEntries = 2_000
    static let readsMax = 400
    /// Reads a window of more than one commit may take before it is read again as an eighth as many
    /// commits: a window holds at most this many pages, or one commit (8,192 entries at most).
    static let windowReadsMax = 4

    enum Step: Equatable {
        /// Read at most `limit` entries after this position.
        case read(after: Int64, limit: Int)
        /// Answer: the changes found; `next` is where an older page starts (nil: the retained feed's start).
        case answer(next: Int64?)
    }

    /// A scan of the entries before `before` (exclusive), newest first.
    init(location: Path, limit: Int, budget: Int, before: Int64, readsMax: Int = Self.readsMax) {
        self.location = location
        self.limit = limit
        self.budget = budget
        self.before = before
        self.readsMax = readsMax
    }

    /// The first read: none of the entries, only where the feed ends.
    var start: Step { .read(after: 0, limit: 0) }

    /// Takes a page the last read returned and says what to do next.
    mutating func take(_ page: ChangeFeedPage) -> Step {
        reads += 1
        trimmedThrough = page.trimmedThrough
        guard let cursor else {
            let start = min(before, (page.head ?? 0) + 1)
            self.cursor = start
            return moveWindow(below: start)
        }
        let fresh = page.entries.filter { $0.position < cursor }
        window += fresh
        windowReads += 1
        if page.entries.count == Self.pageEntries, let last = page.entries.last, fresh.count == page.entries.count {
            // More of this window is left, and its newest entries are in what is left.
            if reads >= readsMax {
                window = []
                return .answer(next: cursor)
            }
            if windowReads >= Self.windowReadsMax && windowCommits > 1 {
                windowCommits = max(1, windowCommits / 8)
                return moveWindow(below: cursor)
            }
            return .read(after: last.position, limit: Self.pageEntries)
        }
        // The window, newest first.
        for entry in window.reversed() {
            scanned += 1
            var served: [UInt8] = []
            entry.appendServed(to: &served)
            guard let parsed = try? FeedEntry(json: served) else { continue }
            // An entry's own changes newest first too (the reverse of the order it made them).
            found += parsed.history(at: location).reversed()
            if found.count >= limit {
                window = []
                return .answer(next: entry.position)
            }
        }
        window = []
        let below = ChangeFeedPosition.of(commit: windowStart, index: 0)
        self.cursor = below
        if scanned >= budget || reads >= readsMax { return .answer(next: below) }
        return moveWindow(below: below)
    }

    /// The next window: the commits just below `position`, or the answer when none are left.
    private mutating func moveWindow(below position: Int64) -> Step {
        window = []
        windowReads = 0
        guard position > 1, position > trimmedThrough + 1 else { return .answer(next: nil) }
        let top = ChangeFeedPosition.commit(of: position - 1)
        windowStart = max(0, top - windowCommits + 1)
        return .read(after: max(0, ChangeFeedPosition.of(commit: windowStart, index: 0) - 1), limit: Self.pageEntries)
    }
}
