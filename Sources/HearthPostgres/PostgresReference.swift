public import HearthCore
public import HearthStorage

/// Raw PostgreSQL, for benchmarks: the rows Hearth's engine would write, upserted into the same table
/// with the same statement in the same transactions, with none of Hearth's work (trees, batches, the
/// change log, threads). `hearth-bench` measures it beside the engine, so it lives here, where libpq is.
public enum PostgresReference {
    /// Upserts string leaves at `paths` (namespace `namespace`) on one connection, `groupSizes[i]` rows
    /// per transaction; returns the seconds taken. With `changeLog`, each transaction also inserts the
    /// change-log row a Hearth commit of those writes inserts (the same statement, the batch encoded
    /// before the clock starts): the inserts Hearth's commit makes, without the rest of its work.
    public static func upsert(
        url: String, namespace: String, paths: [Path], value: String, groupSizes: [Int], changeLog: Bool = false
    ) throws(StorageError) -> Double {
        let endpoint = try PostgresEndpoint(url: url)
        let doing = "inserting the reference rows"
        do {
            let connection = try PostgresConnection(endpoint, deadline: .now + PostgresTimeouts.connect)
            defer { connection.close() }
            let encoded = paths.map { EncodedPath($0).bytes }
            var groups: [Range<Int>] = []
            var sizes = groupSizes.makeIterator()
            while (groups.last?.upperBound ?? 0) < encoded.count {
                let start = groups.last?.upperBound ?? 0
                groups.append(start..<min(encoded.count, start + max(1, sizes.next() ?? 100)))
            }
            var logged: [[UInt8]] = []
            if changeLog {
                _ = try connection.run([PostgresSchema.registerNamespace(namespace)], deadline: .at(.now + PostgresTimeouts.commit))
                logged = groups.map { group in
                    var bytes: [UInt8] = []
                    WriteBatch.encode(paths[group].map { WriteBatch(operations: [.put($0, Node(value))]) }, into: &bytes)
                    return bytes
                }
            }
            let clock = ContinuousClock()
            let start = clock.now
            for (index, group) in groups.enumerated() {
                var columns = RecordColumns()
                for path in encoded[group] {
                    columns.append(path: path, StoredRecord(leaf: .string(value), priority: nil))
                }
                var statements = [PostgresSchema.upsertRecords(namespace: namespace, columns: columns)]
                if changeLog {
                    statements.insert(PostgresSchema.appendChange(namespace: namespace, sequence: Int64(index + 1), batch: logged[index]), at: 0)
                }
                _ = try connection.run(statements, deadline: .at(.now + PostgresTimeouts.commit))
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
