internal import CSQLite

extension SQLiteConnection {
    /// Copies this database into `target` with SQLite's online backup (`sqlite3_backup_*`), a step of
    /// `pagesPerStep` pages at a time, telling `progress` the pages done and in all after each step.
    /// Busy or locked steps are retried. Hold a read transaction on this connection to copy one snapshot.
    package func backup(
        into target: SQLiteConnection, pagesPerStep: Int32 = 4096, progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws(SQLiteError) {
        guard let backup = sqlite3_backup_init(target.pointer, "main", pointer, "main") else {
            throw SQLiteError(
                code: SQLiteResultCode(rawValue: sqlite3_errcode(target.pointer)), message: String(cString: sqlite3_errmsg(target.pointer)),
                context: "sqlite3_backup_init")
        }
        var code: Int32 = SQLITE_OK
        repeat {
            code = sqlite3_backup_step(backup, pagesPerStep)
            let total = Int(sqlite3_backup_pagecount(backup))
            progress?(total - Int(sqlite3_backup_remaining(backup)), total)
        } while code == SQLITE_OK || code == SQLITE_BUSY || code == SQLITE_LOCKED
        // backup_finish returns the error of the failed step, if any.
        try target.check(sqlite3_backup_finish(backup), "backing up \(path) to \(target.path)")
        if code != SQLITE_DONE { try target.check(code, "backing up \(path) to \(target.path)") }
    }
}

extension SQLiteStatement {
    /// The size in bytes of a column's value, without reading it.
    package func byteCount(_ column: Int32) -> Int { Int(sqlite3_column_bytes(handle, column)) }
}
