import HearthSQL
import HearthCore
import HearthStorage

/// The `log` table: commits appended as rows and folded into `nodes` a chunk at a time (docs/storage.md).
///
/// Why a log: each of a commit's writes usually lands on its own leaf page of the `nodes` B-tree (64
/// writers, 64 places in the key space), so a 64-write commit put 64 pages of 4 KB into the WAL and the
/// checkpoint copied them again: 82 bytes on disk per payload byte, and the disk's bandwidth, not fsync,
/// bounded durable writes. A commit now appends its batches as one `log` row (a few pages). Once the log
/// holds `foldByteCount`, each commit also folds its oldest eighth into `nodes`: ~1,000 writes whose rows
/// share leaf pages where the keys cluster (lists of push IDs, a writer's own subtree). A whole 1 MiB fold
/// in one commit shared pages better but held that commit's writers for 20–120 ms; an eighth keeps the
/// pause to a few ms.
///
/// A fold reads the rows back inside its own write transaction (or, for the rows this engine appended,
/// takes their batches from memory after checking the log still starts with them) and deletes exactly
/// what it applied, so it is right whoever folds: the server's storage thread, or a `hearth export` or
/// `hearth backup` closing its engine on the same file meanwhile (the server's byte count is then too
/// high, and its next fold merely comes early).
struct WriteLog {
    /// Log size from which each commit also folds the oldest `foldChunkByteCount` of it into `nodes`
    /// (`SQLiteStorageEngine.defaultLogFoldByteCount` but in tests, which fold often).
    let foldByteCount: Int
    /// How much one commit folds: an eighth of `foldByteCount`, so that no commit (and none of its
    /// writers) waits for a whole fold.
    var foldChunkByteCount: Int { max(1, foldByteCount / 8) }
    /// Encoded bytes in the log, as this engine last knew them.
    var byteCount: Int

    /// A row this engine appended, with its batches still in memory: folding it needs no decoding
    /// (which was a fifth of a fold's CPU) as long as nobody else folded it first.
    struct Row {
        var sequence: Int64
        var batches: [WriteBatch]
        var byteCount: Int
    }
    /// This engine's rows not yet folded, oldest first (rows left by an earlier process are not here).
    /// At most a fold size of them (~130 commits' worth), so dropping folded ones from the front is cheap.
    private(set) var rows: [Row] = []

    /// The log's size in `connection`'s file (rows a process left when it stopped without folding).
    init(reading connection: SQLiteConnection, foldByteCount: Int) throws(SQLiteError) {
        self.foldByteCount = foldByteCount
        byteCount = Int(try connection.integer("SELECT coalesce(sum(length(operations)), 0) FROM log"))
    }

    /// Called with the sequence a row just got, before anything folds in its transaction: a sequence not
    /// above the last of `rows` means the log was emptied and numbers reused (a layout-2 file made before
    /// AUTOINCREMENT, after another engine folded everything), so `rows` no longer describes the table
    /// and must not be folded from. Forgetting them only turns the memory path off, so it is safe even if
    /// the transaction rolls back.
    mutating func willAppend(sequence: Int64) {
        if let last = rows.last, last.sequence >= sequence { rows.removeAll() }
    }

    /// Notes a row this engine appended (after its commit).
    mutating func appended(_ row: Row) {
        willAppend(sequence: row.sequence)
        rows.append(row)
        byteCount += row.byteCount
    }

    /// Calls `body` with every logged batch in commit order.
    ///
    /// - Throws: `SQLiteError`: `.corrupt` when a row does not decode (reported like any corrupted page:
    ///   naming the file, saying to restore a backup), or what `body` throws.
    static func forEachBatch(
        in connection: SQLiteConnection, _ body: (WriteBatch) throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        let select = try connection.prepare("SELECT operations FROM log ORDER BY sequence")
        while try select.step() {
            try body(try decode(select.bytes(0)))
        }
    }

    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(SQLiteError) -> WriteBatch {
        do {
            return try WriteBatch(decoding: UnsafeRawBufferPointer(bytes))
        } catch {
            throw SQLiteError(code: .corrupt, message: error.message, context: "reading the write log")
        }
    }

    /// What a fold did, for the caller to note once its transaction commits (`folded(_:)`).
    struct Fold {
        var byteCount = 0
        /// The last sequence folded, if any.
        var through: Int64?
    }

    /// Applies the oldest logged batches to `nodes` and deletes their rows: at least `minimum` bytes of
    /// them as encoded (at least one row), or all of them when `minimum` is nil. The caller holds the
    /// write transaction.
    ///
    /// The oldest rows come from `rows` when the log's oldest row is this engine's oldest unfolded one
    /// (the usual case); otherwise (rows an earlier process left, or another engine on the file folded
    /// some of this one's), and for rows after the last of `rows`, they are read back and decoded.
    func fold(
        _ connection: SQLiteConnection, into records: inout RecordWriter, atLeast minimum: Int? = nil
    ) throws(SQLiteError) -> Fold {
        var fold = Fold()
        func wantsMore() -> Bool { minimum.map { fold.byteCount < $0 } ?? true }
        let oldest = try connection.integer("SELECT coalesce(min(sequence), -1) FROM log")
        if oldest < 0 { return fold }
        if rows.first?.sequence == oldest {
            for row in rows {
                guard wantsMore() else { break }
                for batch in row.batches { try records.apply(batch) }
                fold.byteCount += row.byteCount
                fold.through = row.sequence
            }
        }
        if wantsMore() {
            let select = records.statements.selectLog
            defer { select.reset() }
            select.bind(1, int64: fold.through ?? -1)
            while wantsMore(), try select.step() {
                let bytes = select.bytes(1)
                let batch = try Self.decode(bytes)
                fold.byteCount += bytes.count
                fold.through = select.int64(0)
                try records.apply(batch)
            }
        }
        if let through = fold.through {
            records.statements.selectLog.reset()
            records.statements.deleteLogThrough.bind(1, int64: through)
            try records.statements.deleteLogThrough.run()
        }
        return fold
    }

    /// Notes a committed fold: its rows leave `rows` and their bytes the count.
    mutating func folded(_ fold: Fold) {
        byteCount = max(0, byteCount - fold.byteCount)
        guard let through = fold.through else { return }
        rows.removeFirst(rows.prefix { $0.sequence <= through }.count)
    }

    /// Notes that the log was emptied (an import replaced everything).
    mutating func cleared() {
        byteCount = 0
        rows.removeAll()
    }
}
