import HearthSQL
import HearthStorage

/// The `feed` table: the namespace's change feed (docs/feed.md), one row per commit that recorded
/// writes, appended in the commit's own transaction, and trimmed from the oldest end by retention.
///
///     CREATE TABLE feed(number INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL,
///                       count INTEGER NOT NULL, entries BLOB NOT NULL)
///     CREATE TABLE feed_trimmed(id INTEGER PRIMARY KEY CHECK (id = 1), through INTEGER NOT NULL)
///
/// - `number`: the commit's number; its entries' positions are `ChangeFeedPosition.of(commit:index:)`.
///   `AUTOINCREMENT`, so a number (and a position) is never given twice, even after trimming.
/// - `time`: when the commit was made (ms), for age-based retention.
/// - `entries`: `count` entries, each a 4-byte little-endian length and the entry's stored form
///   (``ChangeFeedEntry``, served as JSON by `read`). One row per commit
///   instead of one per write: the feed then costs a commit one insert, however many writes it groups.
/// - `feed_trimmed.through`: the last position retention removed, so that a reader behind it is told
///   to resync rather than silently skipping entries.
///
/// Used on the storage thread (appends, trims) and on the engine's feed reader (`read`).
struct FeedTable {
    let retention: ChangeFeedRetention
    /// Bytes of `entries` in the table, as this engine knows them.
    private(set) var byteCount: Int64
    /// When retention last looked at the oldest rows' age (ms).
    private var lastAgeCheck: Int64 = 0
    private var framed: [UInt8] = []

    /// How often retention looks at the oldest entries' age, besides whenever the size is over.
    static let ageCheckMilliseconds: Int64 = 60_000

    static let create = """
        CREATE TABLE IF NOT EXISTS feed(number INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL, count INTEGER NOT NULL, entries BLOB NOT NULL);
        CREATE TABLE IF NOT EXISTS feed_trimmed(id INTEGER PRIMARY KEY CHECK (id = 1), through INTEGER NOT NULL);
        """

    init(reading connection: SQLiteConnection, retention: ChangeFeedRetention) throws(SQLiteError) {
        self.retention = retention
        byteCount = try connection.integer("SELECT coalesce(sum(length(entries)), 0) FROM feed")
    }

    /// Appends the feed records of a commit's `batches` (inside its transaction), then trims what
    /// retention says is too old or too much.
    mutating func append(_ batches: ArraySlice<WriteBatch>, now: Int64, statements: SQLiteStorageEngine.Statements) throws(SQLiteError) {
        var added: Int64 = 0
        do {
            try ChangeFeedRows.frame(batches, framed: &framed) { count, bytes in
                statements.appendFeed.bind(1, int64: now)
                statements.appendFeed.bind(2, int64: Int64(count))
                statements.appendFeed.bind(3, blob: bytes)
                try statements.appendFeed.run()
                added += Int64(bytes.count)
            }
        } catch let error as SQLiteError {
            throw error
        } catch {
            preconditionFailure("only the insert throws: \(error)")
        }
        byteCount += added
        if framed.capacity > 4 << 20 { framed = [] }
        if byteCount > retention.maxBytes || now - lastAgeCheck >= Self.ageCheckMilliseconds {
            lastAgeCheck = now
            try trim(now: now, statements: statements)
        }
    }

    /// Deletes the oldest rows while the feed is over its size or they are older than its age limit,
    /// and records the last position deleted.
    private mutating func trim(now: Int64, statements: SQLiteStorageEngine.Statements) throws(SQLiteError) {
        let oldest = statements.selectFeedSizes
        defer { oldest.reset() }
        var remaining = byteCount
        var through: (number: Int64, count: Int64)?
        while try oldest.step() {
            let time = oldest.int64(1), bytes = oldest.int64(3)
            guard remaining > retention.maxBytes || now - time > retention.maxAgeMilliseconds else { break }
            through = (oldest.int64(0), oldest.int64(2))
            remaining -= bytes
        }
        oldest.reset()
        guard let through else { return }
        statements.deleteFeedThrough.bind(1, int64: through.number)
        try statements.deleteFeedThrough.run()
        let position = ChangeFeedPosition.of(commit: through.number, index: Int(max(0, through.count - 1)))
        statements.setFeedTrimmed.bind(1, int64: position)
        try statements.setFeedTrimmed.run()
        byteCount = remaining
    }

    /// An import replaced the data: the feed no longer explains it. Every entry goes, and every position
    /// given so far counts as trimmed, so that readers resync (inside the import's transaction).
    static func clear(_ connection: SQLiteConnection) throws(SQLiteError) {
        let last = try connection.integer("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'feed'), 0)")
        try connection.execute("DELETE FROM feed")
        guard last > 0 else { return }
        let through = ChangeFeedPosition.of(commit: last, index: ChangeFeedPosition.entriesPerCommitMax - 1)
        try connection.execute("INSERT OR REPLACE INTO feed_trimmed(id, through) VALUES (1, \(through))")
    }

    /// After ``clear(_:)``: nothing is left.
    mutating func cleared() { byteCount = 0 }

    /// The last position retention removed (0 before it removed any), read through `connection`.
    static func trimmedThrough(_ connection: SQLiteConnection) throws -> Int64 {
        try connection.integer("SELECT coalesce((SELECT through FROM feed_trimmed WHERE id = 1), 0)")
    }

    /// At most `limit` entries after `position`, from `connection` (a reader).
    ///
    /// - Throws: `SQLiteError`, or ``StorageError`` (`.corrupt`) for an entry that does not decode.
    static func read(_ connection: SQLiteConnection, after position: Int64, limit: Int) throws -> ChangeFeedPage {
        let trimmed = try FeedTable.trimmedThrough(connection)
        let select = try connection.prepare("SELECT number, count, entries FROM feed WHERE number >= ?1 ORDER BY number")
        select.bind(1, int64: ChangeFeedPosition.commit(of: max(0, position)))
        var entries: [ChangeFeedPage.Entry] = []
        while entries.count < limit, try select.step() {
            try ChangeFeedRows.read(
                row: select.int64(0), count: Int(select.int64(1)), bytes: UnsafeRawBufferPointer(select.bytes(2)),
                after: position, limit: limit, into: &entries)
        }
        let newest = try connection.prepare("SELECT number, count FROM feed ORDER BY number DESC LIMIT 1")
        let head = try newest.step() ? ChangeFeedPosition.of(commit: newest.int64(0), index: Int(newest.int64(1)) - 1) : trimmed
        return ChangeFeedPage(entries: entries, trimmedThrough: trimmed, head: head)
    }
}
