public import HearthCore
public import HearthStorage

/// Raw PostgreSQL, for benchmarks: the rows Hearth's engine would write, upserted into the same table
/// with the same statement in the same transactions, with none of Hearth's work (trees, batches, the
/// change log, threads). `hearth-bench` measures it beside the engine, so it lives here, where libpq is.
public enum PostgresReference {
    /// Upserts string leaves at `paths` (namespace `namespace`) on one connection, `groupSizes[i]` rows
    /// per transaction; returns the seconds taken.
    public static func upsert(
        url: String, namespace: String, paths: [Path], value: String, groupSizes: [Int]
    ) throws(StorageError) -> Double {
        let endpoint = try PostgresEndpoint(url: url)
        let doing = "inserting the reference rows"
        do {
            let connection = try PostgresConnection(endpoint, deadline: .now + PostgresTimeouts.connect)
            defer { connection.close() }
            let encoded = paths.map { EncodedPath($0).bytes }
            let clock = ContinuousClock()
            let start = clock.now
            var index = 0
            var groups = groupSizes.makeIterator()
            while index < encoded.count {
                let size = max(1, groups.next() ?? 100)
                var columns = RecordColumns()
                for path in encoded[index..<min(encoded.count, index + size)] {
                    columns.append(path: path, StoredRecord(leaf: .string(value), priority: nil))
                }
                _ = try connection.run([PostgresSchema.upsertRecords(namespace: namespace, columns: columns)], deadline: .at(.now + PostgresTimeouts.commit))
                index += size
            }
            return (clock.now - start).secondsValue
        } catch {
            throw StorageError(error, at: endpoint, doing: doing)
        }
    }

    /// Removes `namespace`'s records and change log (between runs).
    public static func clear(url: String, namespace: String) throws(StorageError) {
        let endpoint = try PostgresEndpoint(url: url)
        do {
            let connection = try PostgresConnection(endpoint, deadline: .now + PostgresTimeouts.connect)
            defer { connection.close() }
            _ = try connection.run(
                [PostgresSchema.deleteAllRecords(namespace: namespace),
                 PostgresStatement("DELETE FROM hearth_changes WHERE namespace = $1", [.text(namespace)])],
                deadline: .afterSilence(PostgresTimeouts.silence))
        } catch {
            throw StorageError(error, at: endpoint, doing: "clearing namespace '\(namespace)'")
        }
    }
}

extension Duration {
    fileprivate var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
