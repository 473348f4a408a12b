import Dispatch
import HearthStorage

/// Reads a namespace's change feed from PostgreSQL off the loop and off the storage thread, on one serial
/// queue (`hearth.feed.read`) and the connection it keeps while reads come (``KeptConnection``); the
/// feed's location index uses both too (``withConnection(doing:_:)``). A follower has one read in flight
/// however many commits arrive (`ChangeFeedFollower`).
final class PostgresFeedReader: @unchecked Sendable {  // `closed` is touched on `queue` only
    private let endpoint: PostgresEndpoint
    private let namespace: String
    private let queue = DispatchQueue(label: "hearth.feed.read")
    private let connection: KeptConnection
    private var closed = false

    init(endpoint: PostgresEndpoint, namespace: String) {
        self.endpoint = endpoint
        self.namespace = namespace
        connection = KeptConnection(endpoint: endpoint, queue: queue)
    }

    /// Runs `body` on the reads' queue and connection, waiting for it (from any queue but that one).
    func withConnection<T>(doing: String, _ body: (PostgresConnection) throws -> T) throws -> T {
        try queue.sync {
            guard !closed else { throw StorageError(.closed, "namespace '\(namespace)' at \(endpoint) is closed.") }
            return try connection.use(doing: doing, body)
        }
    }

    func read(after position: Int64, limit: Int, completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void) {
        queue.async { [self] in
            guard !closed else {
                return completion(.failure(StorageError(.closed, "namespace '\(namespace)' at \(endpoint) is closed.")))
            }
            completion(Result { () throws(StorageError) in try page(after: position, limit: limit) })
        }
    }

    /// The entries at `positions` (those retention kept), in order: a history's candidates, read in one
    /// statement rather than one connection each.
    func read(at positions: [Int64], completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void) {
        queue.async { [self] in
            guard !closed else {
                return completion(.failure(StorageError(.closed, "namespace '\(namespace)' at \(endpoint) is closed.")))
            }
            completion(Result { () throws(StorageError) in try page(at: positions) })
        }
    }

    private func page(at positions: [Int64]) throws(StorageError) -> ChangeFeedPage {
        let doing = "reading entries of the change feed of namespace '\(namespace)'"
        var sequences = PostgresBinary.ArrayEncoder(of: .int8)
        for sequence in Set(positions.map(ChangeFeedPosition.commit(of:))).sorted() { sequences.append(sequence) }
        let results = try run(
            [PostgresSchema.feedTrimmed(namespace: namespace), PostgresSchema.feedRows(namespace: namespace, sequences: sequences.finish())], doing: doing)
        guard results.count == 2, let trimmed = results[0].firstValue?.bytes(0).flatMap(PostgresBinary.decodeInt64) else {
            throw StorageError(.corrupt, "the change feed of namespace '\(namespace)' at \(endpoint) answered in an unexpected shape.")
        }
        let wanted = Set(positions)
        var entries: [ChangeFeedPage.Entry] = []
        for index in 0..<Int32(clamping: results[1].rowCount) {
            let row = try results[1].feedRow(index, of: namespace, at: endpoint)
            // Only the wanted entries are turned into JSON: a row can hold thousands.
            try ChangeFeedRows.read(row: row.number, count: row.count, bytes: row.bytes, at: wanted, into: &entries)
        }
        return ChangeFeedPage(entries: entries, trimmedThrough: trimmed)
    }

    private func page(after position: Int64, limit: Int) throws(StorageError) -> ChangeFeedPage {
        let doing = "reading the change feed of namespace '\(namespace)'"
        let results = try run(
            [PostgresSchema.feedTrimmed(namespace: namespace),
             // One row more than entries wanted: the first row may hold only entries at or before `position`,
             // and every other row holds at least one.
             PostgresSchema.feedRows(namespace: namespace, from: ChangeFeedPosition.commit(of: max(0, position)), limit: limit + 1),
             PostgresSchema.feedNewest(namespace: namespace)],
            doing: doing)
        guard results.count == 3, let trimmedRow = results[0].rowCount > 0 ? PostgresRow(result: results[0], index: 0) : nil,
              let trimmed = trimmedRow.bytes(0).flatMap(PostgresBinary.decodeInt64)
        else { throw StorageError(.corrupt, "the change feed of namespace '\(namespace)' at \(endpoint) answered in an unexpected shape.") }
        var entries: [ChangeFeedPage.Entry] = []
        for index in 0..<Int32(clamping: results[1].rowCount) where entries.count < limit {
            let row = try results[1].feedRow(index, of: namespace, at: endpoint)
            try ChangeFeedRows.read(row: row.number, count: row.count, bytes: row.bytes, after: position, limit: limit, into: &entries)
        }
        // Where the feed ends, for readers that start from now (webhooks and functions processes).
        var head = trimmed
        if results[2].rowCount > 0 {
            let newest = PostgresRow(result: results[2], index: 0)
            guard let number = newest.bytes(0).flatMap(PostgresBinary.decodeInt64), let count = newest.bytes(1).flatMap(PostgresBinary.decodeInt64)
            else { throw StorageError(.corrupt, "the newest change-feed row of namespace '\(namespace)' at \(endpoint) does not decode.") }
            head = ChangeFeedPosition.of(commit: number, index: Int(clamping: count) - 1)
        }
        return ChangeFeedPage(entries: entries, trimmedThrough: trimmed, head: head)
    }

    /// `statements` in one pipeline on the kept connection.
    private func run(_ statements: [PostgresStatement], doing: String) throws(StorageError) -> [PostgresResult] {
        do {
            return try connection.use(doing: doing) { connection in try connection.run(statements, deadline: .at(.now + PostgresTimeouts.commit)) }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.io, "\(doing): \(error)")
        }
    }

    func close() {
        queue.sync {
            closed = true
            connection.close()
        }
    }
}
