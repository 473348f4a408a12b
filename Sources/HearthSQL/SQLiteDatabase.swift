import Foundation
import HearthSupport

/// A value bound to or read from a SQL statement of ``SQLiteDatabase``.
public enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null

    public var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    public var text: String? { if case .text(let value) = self { value } else { nil } }
    public var blob: [UInt8]? { if case .blob(let value) = self { value } else { nil } }
}

/// A small, thread-safe SQL interface over one SQLite file, for modules that keep their own tables
/// (HearthAuth's accounts) without importing the C library. Every call takes the connection's lock, so
/// statements from different threads run one after another; prepared statements are cached by SQL text.
public final class SQLiteDatabase: @unchecked Sendable {  // all state behind `lock`
    /// A failed statement. `isConstraintViolation` tells a UNIQUE/PRIMARY KEY clash from other failures.
    public struct Failure: Error, CustomStringConvertible {
        public let isConstraintViolation: Bool
        public let description: String
    }

    private let lock = NSLock()
    private let connection: SQLiteConnection
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens (creating when missing) the file at `path` in WAL mode with full sync.
    public init(path: String) throws {
        do {
            connection = try SQLiteConnection(path: path, create: true)
            try connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA busy_timeout=5000;")
        } catch {
            throw Failure(isConstraintViolation: false, description: error.description)
        }
    }

    /// Runs one or more statements without parameters (schema setup).
    public func executeScript(_ sql: String) throws {
        lock.lock()
        defer { lock.unlock() }
        do { try connection.execute(sql) } catch { throw Self.failure(error) }
    }

    /// Runs `sql` with `parameters` bound to `?1…` and returns every row.
    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        lock.lock()
        defer { lock.unlock() }
        return try run(sql, parameters)
    }

    /// Runs one statement; the caller holds `lock`.
    private func run(_ sql: String, _ parameters: [SQLiteValue]) throws -> [[SQLiteValue]] {
        do {
            let statement: SQLiteStatement
            if let cached = statements[sql] {
                statement = cached
            } else {
                statement = try connection.prepare(sql)
                statements[sql] = statement
            }
            defer { statement.reset() }
            for (offset, value) in parameters.enumerated() {
                let index = Int32(offset + 1)
                switch value {
                case .integer(let number): statement.bind(index, int64: number)
                case .text(let text): statement.bind(index, text: text)
                case .blob(let bytes): statement.bind(index, blob: bytes)
                case .null: statement.bindNull(index)
                }
            }
            var rows: [[SQLiteValue]] = []
            while try statement.step() {
                let columns = Int32(statement.columnCount)
                var row: [SQLiteValue] = []
                for column in 0..<columns {
                    switch statement.type(column) {
                    case .integer: row.append(.integer(statement.int64(column)))
                    case .float: row.append(.integer(Int64(statement.double(column))))
                    case .text: row.append(.text(statement.text(column)))
                    case .blob: row.append(.blob(Array(statement.bytes(column))))
                    case .null: row.append(.null)
                    }
                }
                rows.append(row)
            }
            return rows
        } catch {
            throw Self.failure(error)
        }
    }

    /// Runs `body` inside BEGIN IMMEDIATE … COMMIT (rolled back when it throws). `body` must use only the
    /// given `run` function (the lock is already held, so calling `query` from it would deadlock).
    public func transaction<T>(_ body: (_ run: (String, [SQLiteValue]) throws -> [[SQLiteValue]]) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        do { try connection.execute("BEGIN IMMEDIATE") } catch { throw Self.failure(error) }
        do {
            let result = try body { sql, parameters in try self.run(sql, parameters) }
            do { try connection.execute("COMMIT") } catch { throw Self.failure(error) }
            return result
        } catch {
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Moves WAL checkpoints off the callers' path: automatic checkpoints stop, and a background thread
    /// with its own connection runs a PASSIVE checkpoint every `interval` seconds. An automatic checkpoint
    /// runs inside a committing call, holding this database's lock through its fsyncs, which stalled
    /// every other thread (token refreshes spent most of their time waiting on it).
    public func checkpointInBackground(every interval: Double = 1) throws {
        try executeScript("PRAGMA wal_autocheckpoint=0;")
        let checkpointer = try SQLiteConnection(path: connection.path, create: false)
        try checkpointer.execute("PRAGMA busy_timeout=5000;")
        let checkpoints = self.checkpoints
        checkpoints.running.withLock { $0 = true }
        NamedThread.start("hearth.sqlite.checkpoint") {
            // Waits `interval` between checkpoints, or until close() wakes it.
            while checkpoints.wake.wait(timeout: .now() + interval) == .timedOut {
                try? checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE);")
            }
            checkpointer.close()
            checkpoints.finished.signal()
        }
    }

    /// The checkpointing thread's signals: `wake` ends it, `finished` says it has closed its connection.
    private final class Checkpoints: Sendable {
        let running = Locked(false)
        let wake = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
    }
    private let checkpoints = Checkpoints()

    /// Closes the database, after stopping the checkpointing thread and waiting for it to end.
    public func close() {
        let wasRunning = checkpoints.running.withLock { running in
            defer { running = false }
            return running
        }
        if wasRunning {
            checkpoints.wake.signal()
            checkpoints.finished.wait()
        }
        lock.lock()
        defer { lock.unlock() }
        try? connection.execute("PRAGMA wal_checkpoint(PASSIVE);")
        statements.removeAll()
        connection.close()
    }

    private static func failure(_ error: SQLiteError) -> Failure {
        Failure(isConstraintViolation: SQLiteResultCode.constraint ~= error.code, description: error.description)
    }
}
