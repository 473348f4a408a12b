import Dispatch
import HearthSQL
import HearthStorage

/// Reads an engine's change feed off the loop and off the storage thread: one serial queue with its own
/// reader connection, opened on the first read and kept (WAL lets it read beside the writer, and it
/// sees every commit made before the read started).
final class FeedReader: @unchecked Sendable {
    private let path: String
    private let queue = DispatchQueue(label: "hearth.feed.read")
    // On `queue` only.
    private var connection: SQLiteConnection?
    private var closed = false

    init(path: String) { self.path = path }

    func read(after position: Int64, limit: Int, completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void) {
        queue.async { [self] in
            guard !closed else {
                return completion(.failure(StorageError(.closed, "the database \(path) is closed.")))
            }
            do {
                if connection == nil {
                    let opened = try SQLiteConnection(path: path, create: false)
                    try SQLiteStorageEngine.configure(opened)
                    connection = opened
                }
                guard let connection else { preconditionFailure("opened just above") }
                completion(.success(try FeedTable.read(connection, after: position, limit: limit)))
            } catch let error as SQLiteError {
                completion(.failure(SQLiteStorageEngine.storageError(error, path: path)))
            } catch let error as StorageError {
                completion(.failure(StorageError(error.code, "\(path): \(error.message) Restore the file from a backup, or import the data again (which empties the feed).")))
            } catch {
                completion(.failure(StorageError(.io, "reading the change feed of \(path): \(error)")))
            }
        }
    }

    /// Runs `body` on the reader connection, on the reader's queue, and waits for it.
    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try queue.sync {
            guard !closed else { throw StorageError(.closed, "the database \(path) is closed.") }
            if connection == nil {
                let opened = try SQLiteConnection(path: path, create: false)
                try SQLiteStorageEngine.configure(opened)
                connection = opened
            }
            guard let connection else { preconditionFailure("opened just above") }
            return try body(connection)
        }
    }

    /// Closes the reader connection; later reads fail as closed.
    func close() {
        queue.sync {
            closed = true
            connection?.close()
            connection = nil
        }
    }
}
