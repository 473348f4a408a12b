/// Chooses, as the engine runs, whether commits go through the write log or straight to `nodes`, from
/// the pages each transaction writes to the WAL (`SQLITE_DBSTATUS_CACHE_WRITE`) per record operation.
///
/// The log pays when commits would touch many pages (new rows spread over a large table in clusters:
/// `storage.write`'s 64 writers, 1.5–1.7× with it) and costs when they touch few (64 clients rewriting
/// their own paths, all on one or two pages: `ws.writes` 10–30 % slower with it) or when folds share few
/// pages either (random keys over a large table: REST PUTs 5–15 % slower). So commits start direct; when
/// a window of them wrote at least `spreadMin` pages per operation the log is tried, and it stays only
/// while it writes `gainMin` times fewer pages per operation than the direct window did.
struct WriteLogPolicy {
    typealias Choice = WriteLogPolicyChoice

    let choice: Choice
    /// Whether the next commit appends to the log.
    private(set) var usesLog: Bool

    /// Commits per measurement.
    static let windowCommits = 64
    /// Direct pages per operation from which the log is tried.
    static let spreadMin = 0.5
    /// How many times fewer pages per operation the log must write to stay.
    static let gainMin = 1.5
    /// Direct commits after a trial the log lost, before the next trial.
    static let holdCommits = 4096

    private var commits = 0, operations = 0, pages = 0
    private var directPagesPerOperation = 0.0
    /// Windows to skip before judging the log: it fills first (~128 commits of 64 writes), and folds
    /// start only when it is full.
    private var windowsToSkip = 0
    private var holdLeft = 0

    init(_ choice: Choice) {
        self.choice = choice
        usesLog = choice == .always
    }

    /// Whether commits are measured (`committed`); only an adaptive choice uses the numbers.
    var measures: Bool { choice == .adaptive }

    /// Counts a committed transaction: its record operations and the WAL pages it wrote.
    mutating func committed(operations newOperations: Int, pages newPages: Int) {
        guard measures else { return }
        commits += 1
        operations += newOperations
        pages += newPages
        if holdLeft > 0 { holdLeft -= 1 }
        guard commits >= Self.windowCommits else { return }
        let perOperation = operations > 0 ? Double(pages) / Double(operations) : 0
        commits = 0
        operations = 0
        pages = 0
        if windowsToSkip > 0 {
            windowsToSkip -= 1
            return
        }
        if !usesLog {
            if holdLeft == 0 && perOperation >= Self.spreadMin {
                directPagesPerOperation = perOperation
                usesLog = true
                windowsToSkip = 3
            }
        } else if perOperation * Self.gainMin > directPagesPerOperation {
            usesLog = false
            holdLeft = Self.holdCommits
        }
    }
}

/// Whether an engine's commits go through its write log (`SQLiteStorageEngine.WriteLogChoice`).
public enum WriteLogPolicyChoice: Sendable, Equatable {
    /// Measure and choose as the engine runs (the default; `WriteLogPolicy`).
    case adaptive
    /// Always log (tests of the log itself).
    case always
    /// Never log: every commit writes its rows (the layout before the log).
    case never
}
