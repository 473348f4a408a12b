import HearthCore
import HearthStorage

/// A namespace's whole tree and the sequence of the last commit in it, read in one REPEATABLE READ
/// transaction: the tree is exactly the commits up to `sequence`, so a server that loads it and then
/// follows the change log from `sequence` misses nothing and applies nothing twice.
struct PostgresSnapshot {
    var root: Node
    var sequence: Int64

    static func read(
        namespace: String, on connection: PostgresConnection, location: String, progress: ((LoadProgress) -> Void)?
    ) throws(StorageError) -> PostgresSnapshot {
        var builder = RecordTreeBuilder()
        let sequence = try stream(namespace: namespace, on: connection, location: location, progress: progress, into: &builder)
        return PostgresSnapshot(root: try builder.finish(), sequence: sequence)
    }

    /// The same snapshot's records, in path order, handed to `sink` as they arrive (a streamed export
    /// writes them out without building the tree); returns the snapshot's sequence.
    static func stream<Sink: RecordSink>(
        namespace: String, on connection: PostgresConnection, location: String, progress: ((LoadProgress) -> Void)?,
        into sink: inout Sink
    ) throws(StorageError) -> Int64 {
        let doing = "loading namespace '\(namespace)'"
        var builder = sink  // the row handler cannot capture an inout parameter
        defer { sink = builder }
        var count = 0
        var sequence: Int64 = 0
        do throws(PostgresStreamError) {
            do throws(PostgresError) {
                // The primary key's index scan returns the rows in path order as they are read. Without
                // fresh statistics (right after an import) the planner takes the namespace for a few rows
                // and sorts them instead, on disk past work_mem (100k records: 104 ms against 35 ms):
                // sorting is ruled out for this transaction.
                let opened = try connection.run(
                    [
                        PostgresStatement("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"),
                        PostgresStatement("SET LOCAL enable_sort = off"),
                        PostgresSchema.lastSequence(namespace: namespace),
                    ], deadline: .afterSilence(PostgresTimeouts.silence))
                guard let last = opened.last?.firstValue?.bytes(0).flatMap(PostgresBinary.decodeInt64) else {
                    throw PostgresError(.server(sqlState: ""), "the namespace's last sequence did not decode")
                }
                sequence = last
            } catch { throw .postgres(error) }
            try connection.stream(PostgresSchema.selectRecords(namespace: namespace), deadline: .afterSilence(PostgresTimeouts.silence)) {
                row throws(PostgresStreamError) in
                do throws(StorageError) {
                    let record = try PostgresStorageEngine.record(row)
                    guard let path = row.bytes(0) else { throw StorageError.corruptRecords("a record without a path") }
                    try builder.add(path: path, leaf: record.leaf, priority: record.priority)
                } catch {
                    throw .rejected(error)
                }
                count += 1
                if count % 100_000 == 0 { progress?(LoadProgress(done: count, total: nil)) }
            }
            do throws(PostgresError) {
                _ = try connection.run([PostgresStatement("COMMIT")], deadline: .afterSilence(PostgresTimeouts.silence))
            } catch { throw .postgres(error) }
        } catch {
            switch error {
            case .postgres(let error): throw StorageError(error, at: connection.endpoint, doing: doing)
            case .rejected(let error): throw StorageError(error.code, "\(location): \(error.message)")
            }
        }
        progress?(LoadProgress(done: count, total: count))
        return sequence
    }
}
