internal import CSQLite

/// A SQLite result code, primary (`SQLITE_BUSY`) or extended (`SQLITE_IOERR_FSYNC`), named like the C
/// constants. A primary pattern matches its extended codes in `switch`:
///
///     switch code { case .busy: … }   // also SQLITE_BUSY_SNAPSHOT, SQLITE_BUSY_RECOVERY
package struct SQLiteResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code: the low 8 bits (https://sqlite.org/rescode.html#primary_result_codes_versus_extended_result_codes).
    package var primary: SQLiteResultCode { SQLiteResultCode(rawValue: rawValue & 0xFF) }

    package static let ok = SQLiteResultCode(rawValue: SQLITE_OK)
    package static let error = SQLiteResultCode(rawValue: SQLITE_ERROR)
    package static let permission = SQLiteResultCode(rawValue: SQLITE_PERM)
    package static let busy = SQLiteResultCode(rawValue: SQLITE_BUSY)
    package static let locked = SQLiteResultCode(rawValue: SQLITE_LOCKED)
    package static let noMemory = SQLiteResultCode(rawValue: SQLITE_NOMEM)
    package static let readOnly = SQLiteResultCode(rawValue: SQLITE_READONLY)
    package static let ioError = SQLiteResultCode(rawValue: SQLITE_IOERR)
    package static let corrupt = SQLiteResultCode(rawValue: SQLITE_CORRUPT)
    package static let full = SQLiteResultCode(rawValue: SQLITE_FULL)
    package static let cannotOpen = SQLiteResultCode(rawValue: SQLITE_CANTOPEN)
    package static let constraint = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT)
    package static let tooBig = SQLiteResultCode(rawValue: SQLITE_TOOBIG)
    package static let misuse = SQLiteResultCode(rawValue: SQLITE_MISUSE)
    package static let notADatabase = SQLiteResultCode(rawValue: SQLITE_NOTADB)
    package static let row = SQLiteResultCode(rawValue: SQLITE_ROW)
    package static let done = SQLiteResultCode(rawValue: SQLITE_DONE)

    /// A primary pattern matches itself and its extended codes; an extended pattern matches only itself.
    package static func ~= (pattern: SQLiteResultCode, code: SQLiteResultCode) -> Bool {
        pattern == code || (pattern == pattern.primary && pattern == code.primary)
    }

    package var description: String {
        String(cString: sqlite3_errstr(rawValue)) + " (\(rawValue))"
    }
}

/// A failed SQLite call: the code, SQLite's message and what Hearth was doing.
package struct SQLiteError: Error, CustomStringConvertible {
    package let code: SQLiteResultCode
    package let message: String
    package let context: String

    package init(code: SQLiteResultCode, message: String, context: String) {
        self.code = code
        self.message = message
        self.context = context
    }

    package var description: String { "\(context): \(message) [\(code)]" }
}
