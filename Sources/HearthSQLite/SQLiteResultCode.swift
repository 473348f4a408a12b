internal import CSQLite

/// A SQLite result code, primary (`SQLITE_BUSY`) or extended (`SQLITE_IOERR_FSYNC`), named like the C
/// constants. A primary pattern matches its extended codes in `switch`:
///
///     switch code { case .busy: … }   // also SQLITE_BUSY_SNAPSHOT, SQLITE_BUSY_RECOVERY
struct SQLiteResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int32
    init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code: the low 8 bits (https://sqlite.org/rescode.html#primary_result_codes_versus_extended_result_codes).
    var primary: SQLiteResultCode { SQLiteResultCode(rawValue: rawValue & 0xFF) }

    static let ok = SQLiteResultCode(rawValue: SQLITE_OK)
    static let error = SQLiteResultCode(rawValue: SQLITE_ERROR)
    static let permission = SQLiteResultCode(rawValue: SQLITE_PERM)
    static let busy = SQLiteResultCode(rawValue: SQLITE_BUSY)
    static let locked = SQLiteResultCode(rawValue: SQLITE_LOCKED)
    static let noMemory = SQLiteResultCode(rawValue: SQLITE_NOMEM)
    static let readOnly = SQLiteResultCode(rawValue: SQLITE_READONLY)
    static let ioError = SQLiteResultCode(rawValue: SQLITE_IOERR)
    static let corrupt = SQLiteResultCode(rawValue: SQLITE_CORRUPT)
    static let full = SQLiteResultCode(rawValue: SQLITE_FULL)
    static let cannotOpen = SQLiteResultCode(rawValue: SQLITE_CANTOPEN)
    static let constraint = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT)
    static let misuse = SQLiteResultCode(rawValue: SQLITE_MISUSE)
    static let notADatabase = SQLiteResultCode(rawValue: SQLITE_NOTADB)
    static let row = SQLiteResultCode(rawValue: SQLITE_ROW)
    static let done = SQLiteResultCode(rawValue: SQLITE_DONE)

    /// A primary pattern matches itself and its extended codes; an extended pattern matches only itself.
    static func ~= (pattern: SQLiteResultCode, code: SQLiteResultCode) -> Bool {
        pattern == code || (pattern == pattern.primary && pattern == code.primary)
    }

    var description: String {
        String(cString: sqlite3_errstr(rawValue)) + " (\(rawValue))"
    }
}

/// A failed SQLite call: the code, SQLite's message and what Hearth was doing.
struct SQLiteError: Error, CustomStringConvertible {
    let code: SQLiteResultCode
    let message: String
    let context: String

    var description: String { "\(context): \(message) [\(code)]" }
}
