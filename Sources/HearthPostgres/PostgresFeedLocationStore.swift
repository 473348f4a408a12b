import HearthCore
import HearthStorage

/// PostgreSQL's side of a ``FeedLocationIndex`` (`PostgresSchema+FeedLocations`), on the feed reader's
/// queue and connection, beside the storage thread and never holding it (a step is a transaction of its
/// own, under the namespace's step lock). Once the reader is closed every call fails, which ends a
/// background build.
final class PostgresFeedLocationStore: FeedLocationStore {
    private let reader: PostgresFeedReader
    private let endpoint: PostgresEndpoint
    private let namespace: String

    init(reader: PostgresFeedReader, endpoint: PostgresEndpoint, namespace: String) {
        self.reader = reader
        self.endpoint = endpoint
        self.namespace = namespace
    }

    /// One connection for the whole question: how far behind, the steps to catch up, the candidates.
    func find(of location: Path, before: Int64, limit: Int, catchUpMax: Int64) throws -> FeedLocationAnswer {
        try reader.withConnection(doing: "reading the change feed's location index") { connection in
            let through = try Self.int64(connection.run([PostgresSchema.feedLocationsThrough(namespace: namespace)], deadline: deadline())[0])
            let counted = try connection.run(
                [PostgresSchema.feedEntriesAfter(namespace: namespace, position: through, atMost: catchUpMax + 1)], deadline: deadline())
            guard try Self.int64(counted[0]) <= catchUpMax else { return .farBehind }
            while try step(on: connection) {}
            return .caughtUp(try candidates(of: location, before: before, limit: limit, on: connection))
        }
    }

    func step() throws -> Bool {
        try reader.withConnection(doing: "indexing the change feed by location") { connection in try step(on: connection) }
    }

    private func step(on connection: PostgresConnection) throws -> Bool {
        let begun = try connection.run(PostgresSchema.beginFeedLocationStep(namespace: namespace), deadline: deadline())
        let trimmed = try Self.int64(begun[3])
        let start = max(try Self.int64(begun[2]), trimmed)
        let chunkEnd = begun[4].rowCount > 0 ? try Self.int64(begun[4]) : trimmed
        let dropThrough = min(trimmed, chunkEnd)
        let read = try connection.run(
            [PostgresSchema.feedRowsForStep(namespace: namespace, from: ChangeFeedPosition.commit(of: start), entries: FeedLocationLimits.entriesPerStep)],
            deadline: deadline())[0]
        var taken = FeedLocationRows(after: start)
        for index in 0..<Int32(clamping: read.rowCount) where !taken.isFull {
            let row = try read.feedRow(index, of: namespace, at: endpoint)
            try taken.take(row: row.number, count: row.count, bytes: row.bytes)
        }
        var paths = PostgresBinary.ArrayEncoder(of: .bytea)
        var positions = PostgresBinary.ArrayEncoder(of: .int8)
        for row in taken.sorted {
            paths.append(row.path)
            positions.append(row.position)
        }
        // Whether this step took anything: the step after the last one finds nothing, says so, and writes
        // nothing (a commit without writes is not flushed: a history of a caught-up index waits for no fsync).
        let took = taken.last > start
        let drop = trimmed > 0 ? [PostgresSchema.dropTrimmedFeedLocations(namespace: namespace, through: dropThrough)] : []
        _ = try connection.run(
            drop + (took ? PostgresSchema.finishFeedLocationStep(namespace: namespace, paths: paths.finish(), positions: positions.finish(), through: taken.last)
                : [PostgresStatement("COMMIT")]),
            deadline: deadline())
        return took || dropThrough < trimmed
    }

    private func candidates(of location: Path, before: Int64, limit: Int, on connection: PostgresConnection) throws -> FeedLocationCandidates? {
        let encoded = EncodedPath(location)
        guard !encoded.isRoot else { return nil }
        let ends = try connection.run(
            [PostgresSchema.feedLocationsThrough(namespace: namespace), PostgresSchema.feedTrimmed(namespace: namespace)], deadline: deadline())
        let through = try Self.int64(ends[0]), trimmed = try Self.int64(ends[1])
        var ancestors = PostgresBinary.ArrayEncoder(of: .bytea)
        var ancestor = location
        while let parent = ancestor.parent {
            ancestor = parent
            ancestors.append(EncodedPath(ancestor).bytes)
        }
        let below = min(before, through + 1)
        let found = try connection.run(
            [PostgresSchema.feedLocationsBelow(
                namespace: namespace, low: encoded.bytes, high: encoded.subtreeEnd, before: below, trimmed: trimmed, limit: FeedLocationLimits.denseRows + 1),
             PostgresSchema.feedLocationsAt(namespace: namespace, paths: ancestors.finish(), before: below, trimmed: trimmed, limit: limit)],
            deadline: deadline())
        guard found[0].rowCount <= FeedLocationLimits.denseRows else { return nil }
        let positions = try (found[0].positions + found[1].positions).map { position throws(StorageError) in
            guard let position else { throw StorageError(.corrupt, "the change feed's location index of namespace '\(namespace)' at \(endpoint) answered in an unexpected shape.") }
            return position
        }
        return FeedLocationCandidates(positions: FeedLocationLimits.newest(positions, limit: limit), indexedThrough: through)
    }

    private func deadline() -> PostgresDeadline { .at(.now + PostgresTimeouts.commit) }

    private static func int64(_ result: PostgresResult) throws(StorageError) -> Int64 {
        guard let value = result.firstValue?.bytes(0).flatMap(PostgresBinary.decodeInt64) else {
            throw StorageError(.corrupt, "the change feed's location index answered in an unexpected shape.")
        }
        return value
    }
}

private extension PostgresResult {
    /// The first column of every row as a bigint (nil where one does not decode).
    var positions: [Int64?] {
        (0..<Int32(clamping: rowCount)).map { PostgresRow(result: self, index: $0).bytes(0).flatMap(PostgresBinary.decodeInt64) }
    }
}
