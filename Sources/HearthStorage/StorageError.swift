/// Why a storage operation failed, with what to do next.
///
/// `code` is stable and machine-readable; `message` names the file (or the PostgreSQL server, without
/// its password) involved and says what the operator should do. No value from the database is ever part of the message.
///
///     do { try engine.load(progress: nil) } catch { print(error) }
///     // storage: the database file hearth-data/demo.sqlite is corrupted (…). Restore it from a backup …
public struct StorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable reasons, grouped by what the operator does about them.
    public enum Code: String, Sendable, Hashable {
        /// The disk (or the file system's quota) is full: free space and retry.
        case diskFull = "DISK_FULL"
        /// The data directory or file cannot be written: fix permissions or mount options.
        case readOnly = "READ_ONLY"
        /// The data directory or the namespace's file does not exist.
        case notFound = "NOT_FOUND"
        /// The file is not a Hearth database or is damaged: restore from a backup.
        case corrupt = "CORRUPT"
        /// Another process holds the database locked for longer than the busy timeout.
        case busy = "BUSY"
        /// Any other I/O error reported by the operating system.
        case io = "IO_ERROR"
        /// The database server (PostgreSQL) cannot be reached, or stopped answering: check that it runs
        /// and that the network and the URL are right. Writes fail until it is back.
        case unavailable = "UNAVAILABLE"
        /// A commit failed earlier and this write was queued behind it, built on the failed state.
        case abortedAfterFailure = "ABORTED_AFTER_FAILURE"
        /// Another server committed to the namespace first (a cluster), so this write, decided on the
        /// state before that commit, was not stored. ``DurableDatabase`` catches up and decides it again;
        /// callers never see it.
        case superseded = "SUPERSEDED"
        /// The engine was closed.
        case closed = "CLOSED"
        /// The engine cannot do this (for example an online backup of the in-memory engine).
        case unsupported = "UNSUPPORTED"
        /// Input data (an import file) is not valid.
        case invalidData = "INVALID_DATA"
    }

    public var code: Code
    /// What happened, which file, and what to do next.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "storage: \(message)" }
}
