internal import CSQLite
#if canImport(Glibc)
    import Glibc
#endif

/// One SQLite connection. Not thread-safe by itself: it is opened with `SQLITE_OPEN_NOMUTEX`, and its
/// owner (the engine's storage thread for the writer, or the one call that opened a reader) is the only
/// thread that touches it.
package final class SQLiteConnection: @unchecked Sendable {  // confined to one thread at a time, see above
    /// The handle; freed by `close()` (or deinit).
    private var handle: OpaquePointer?
    package let path: String
    /// Kept alive for the WAL hook that points at it (``checkpointAutomatically(atFrames:)``).
    var walCheckpoints: WALCheckpoints?

    /// Opens `path`. With `create`, a missing file is created.
    ///
    /// sqlite3_open_v2 returns a handle even when it fails (except out of memory); that handle must be
    /// closed, which is why the failure path closes it before throwing.
    package init(path: String, create: Bool) throws(SQLiteError) {
        self.path = path
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        if create { flags |= SQLITE_OPEN_CREATE }
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        if code != SQLITE_OK {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw SQLiteError(code: SQLiteResultCode(rawValue: code), message: message, context: "opening \(path)")
        }
        sqlite3_extended_result_codes(handle, 1)
        self.handle = handle
    }

    deinit { close() }

    var pointer: OpaquePointer {
        guard let handle else { preconditionFailure("SQLite connection to \(path) used after close") }
        return handle
    }

    /// Pages this connection has written to the WAL so far (`SQLITE_DBSTATUS_CACHE_WRITE`).
    package var pagesWritten: Int {
        var current: Int32 = 0, highest: Int32 = 0
        sqlite3_db_status(pointer, SQLITE_DBSTATUS_CACHE_WRITE, &current, &highest, 0)
        return Int(current)
    }

    /// Lowers the longest text or blob SQLite takes (`SQLITE_LIMIT_LENGTH`, a billion bytes by default):
    /// tests use it to see a refused binding reported.
    package func limitValueLength(to bytes: Int32) {
        sqlite3_limit(pointer, SQLITE_LIMIT_LENGTH, bytes)
    }

    /// The rowid of the last row this connection inserted (`sqlite3_last_insert_rowid`).
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(pointer) }

    package func close() {
        guard let handle else { return }
        // close_v2 defers the close until every statement is finalized, so it cannot fail with BUSY.
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// The one place a SQLite return code becomes Swift control flow: OK, ROW and DONE pass, misuse is a
    /// bug in Hearth and stops the process, everything else is thrown with SQLite's message.
    @discardableResult
    package func check(_ rawCode: Int32, _ context: @autoclosure () -> String) throws(SQLiteError) -> SQLiteResultCode {
        let code = SQLiteResultCode(rawValue: rawCode)
        switch code {
        case .ok, .row, .done: return code
        case .misuse: preconditionFailure("SQLite misuse (\(context())): \(String(cString: sqlite3_errmsg(pointer)))")
        default:
            throw SQLiteError(code: code, message: String(cString: sqlite3_errmsg(pointer)), context: context())
        }
    }

    /// Runs SQL with no results (several statements allowed).
    package func execute(_ sql: String) throws(SQLiteError) {
        try check(sqlite3_exec(pointer, sql, nil, nil, nil), sql)
    }

    /// The first column of the first row of `sql`, as text.
    package func text(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    package func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    package func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(pointer, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil), sql)
        return SQLiteStatement(handle: statement!, connection: self, sql: sql)
    }

    /// True while a transaction is open (SQLite rolls back by itself after some errors, such as SQLITE_FULL).
    package var isInTransaction: Bool { sqlite3_get_autocommit(pointer) == 0 }
}

/// A prepared statement of one connection, with the same owner.
package final class SQLiteStatement {
    let handle: OpaquePointer
    unowned let connection: SQLiteConnection
    package let sql: String

    init(handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// The first binding SQLite refused since the last step (out of memory, longer than its limit): that
    /// parameter is NULL, so the step reports the refusal instead of running. Unchecked, an out-of-memory
    /// blob surfaced as a misleading constraint failure, and would have stored NULL in a nullable column.
    private var refusedBinding = SQLITE_OK

    @inline(__always)
    private func bound(_ code: Int32) {
        if code != SQLITE_OK && refusedBinding == SQLITE_OK { refusedBinding = code }
    }

    /// Steps once: true when a row is ready, false when done. The statement is reset by `reset()`.
    @inline(__always)
    package func step() throws(SQLiteError) -> Bool {
        if refusedBinding != SQLITE_OK {
            let code = refusedBinding
            refusedBinding = SQLITE_OK
            sqlite3_reset(handle)
            try connection.check(code, "binding a parameter of \(sql)")
        }
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        sqlite3_reset(handle)
        try connection.check(code, sql)
        return false
    }

    /// Steps a statement that returns no rows, then resets it for the next use.
    @inline(__always)
    package func run() throws(SQLiteError) {
        defer { sqlite3_reset(handle) }
        _ = try step()
    }

    package func reset() {
        refusedBinding = SQLITE_OK
        sqlite3_reset(handle)
    }

    // Binding. Text and blobs are copied by SQLite (SQLITE_TRANSIENT), so the Swift buffer may go away.
    package func bind(_ index: Int32, text bytes: UnsafeBufferPointer<UInt8>) {
        bound(sqlite3_bind_text(handle, index, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(bytes.count), CSQLite_transient()))
    }

    package func bind(_ index: Int32, text: String) {
        var text = text
        text.withUTF8 { bytes in
            // An empty Swift string may have no base address; SQLite needs one for text (not NULL).
            if bytes.isEmpty {
                bound(sqlite3_bind_text(handle, index, "", 0, CSQLite_transient()))
            } else {
                bind(index, text: bytes)
            }
        }
    }

    package func bind(_ index: Int32, blob bytes: [UInt8]) {
        bound(bytes.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), CSQLite_transient()) })
    }

    package func bind(_ index: Int32, int64 value: Int64) { bound(sqlite3_bind_int64(handle, index, value)) }
    package func bind(_ index: Int32, double value: Double) { bound(sqlite3_bind_double(handle, index, value)) }
    package func bindNull(_ index: Int32) { bound(sqlite3_bind_null(handle, index)) }

    // Columns.
    package enum ColumnType { case integer, float, text, blob, null }

    @inline(__always)
    package func type(_ column: Int32) -> ColumnType {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .float
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    package var columnCount: Int { Int(sqlite3_column_count(handle)) }
    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    package func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The column's bytes, valid until the next step or reset.
    @inline(__always)
    package func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer, count > 0 else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: pointer.assumingMemoryBound(to: UInt8.self), count: count)
    }

    package func text(_ column: Int32) -> String { String(decoding: bytes(column), as: UTF8.self) }
}
