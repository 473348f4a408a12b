import HearthCore
import HearthStorage

/// The `log` table: commits appended as rows and folded into `nodes` now and then (docs/storage.md).
///
/// Why a log: each of a commit's writes usually lands on its own leaf page of the `nodes` B-tree (64
/// writers, 64 places in the key space), so a 64-write commit put 64 pages of 4 KB into the WAL and the
/// checkpoint copied them again: 82 bytes on disk per payload byte, and the disk's bandwidth, not fsync,
/// bounded durable writes. A commit now appends its batches as one `log` row (a few pages), and once the
/// log holds `SQLiteStorageEngine.defaultLogFoldByteCount` one commit applies the whole log to `nodes` and empties it; by then many
/// writes share each leaf page.
///
/// A fold reads the rows back inside its own write transaction and deletes exactly what it applied, so
/// it is right whoever folds: the server's storage thread, or a `hearth export` or `hearth backup`
/// closing its engine on the same file meanwhile (the server's byte count is then too high, and its next
/// fold merely comes early).
struct WriteLog {
    /// Log size at which a commit folds the log into `nodes` instead of adding to it
    /// (`SQLiteStorageEngine.defaultLogFoldByteCount` but in tests, which fold often).
    let foldByteCount: Int
    /// Encoded bytes in the log, as this engine last knew them.
    var byteCount: Int

    /// The log's size in `connection`'s file (rows a process left when it stopped without folding).
    init(reading connection: SQLiteConnection, foldByteCount: Int) throws(SQLiteError) {
        self.foldByteCount = foldByteCount
        byteCount = Int(try connection.integer("SELECT coalesce(sum(length(operations)), 0) FROM log"))
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
            let batch: WriteBatch
            do {
                batch = try WriteBatch(decoding: UnsafeRawBufferPointer(select.bytes(0)))
            } catch {
                throw SQLiteError(code: .corrupt, message: error.message, context: "reading the write log")
            }
            try body(batch)
        }
    }

    /// Applies every logged batch to `nodes` and empties the log; the caller holds the write transaction.
    mutating func fold(_ connection: SQLiteConnection, into records: inout RecordWriter) throws(SQLiteError) {
        try Self.forEachBatch(in: connection) { batch throws(SQLiteError) in
            for operation in batch.operations { try records.apply(operation) }
        }
        try records.statements.clearLog.run()
    }
}
