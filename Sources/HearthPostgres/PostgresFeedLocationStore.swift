import HearthCore
import HearthStorage
import Synchronization

/// PostgreSQL's side of a ``FeedLocationIndex`` (`PostgresSchema+FeedLocations`): each call on a short
/// connection of its own, as the feed reader's, beside the storage thread and never holding it (a step is
/// a transaction of its own, under the namespace's step lock).
final class PostgresFeedLocationStore: FeedLocationStore {
    private let endpoint: PostgresEndpoint
    private let namespace: String
    private let closed = Atomic(false)

    init(endpoint: PostgresEndpoint, namespace: String) {
        self.endpoint = endpoint
        self.namespace = namespace
    }

    /// Makes every later call fail, ending a background build.
    func close() { closed.store(true, ordering: .relaxed) }

    func entriesBehind(atMost: Int64) throws -> Int64 {
        try withConnection(doing: "reading how far the change feed's location index is behind") { connection in
            let through = try Self.int64(connection.run([PostgresSchema.feedLocationsThrough(namespace: namespace)], deadline: deadline())[0])
            let counted = try connection.run([PostgresSchema.feedEntriesAfter(namespace: namespace, position: through, atMost: atMost)], deadline: deadline())
            return try Self.int64(counted[0])
        }
    }

    func step() throws -> Bool {
        try withConnection(doing: "indexing the change feed by location") { connection in
            let begun = try connection.run(PostgresSchema.beginFeedLocationStep(namespace: namespace), deadline: deadline())
            let start = max(try Self.int64(begun[3]), try Self.int64(begun[4]))
            let read = try connection.run(
                [PostgresSchema.feedRowsForStep(namespace: namespace, from: ChangeFeedPosition.commit(of: start), entries: FeedLocationLimits.entriesPerStep)],
                deadline: deadline())[0]
            var taken = FeedLocationRows(after: start)
            for index in 0..<Int32(clamping: read.rowCount) where !taken.isFull {
                let row = PostgresRow(result: read, index: index)
                guard let number = row.bytes(0).flatMap(PostgresBinary.decodeInt64),
                      let count = row.bytes(1).flatMap(PostgresBinary.decodeInt64), let bytes = row.bytes(2)
                else { throw StorageError(.corrupt, "a change-feed row of namespace '\(namespace)' at \(endpoint) does not decode.") }
                try taken.take(row: number, count: Int(clamping: count), bytes: UnsafeRawBufferPointer(bytes))
            }
            var paths = PostgresBinary.ArrayEncoder(of: .bytea)
            var positions = PostgresBinary.ArrayEncoder(of: .int8)
            for row in taken.sorted {
                paths.append(row.path)
                positions.append(row.position)
            }
            _ = try connection.run(
                PostgresSchema.finishFeedLocationStep(namespace: namespace, paths: paths.finish(), positions: positions.finish(), through: taken.last),
                deadline: deadline())
            // Whether this step took anything: the step after the last one finds nothing and says so.
            return taken.last > start
        }
    }

    func candidates(of location: Path, before: Int64, limit: Int) throws -> FeedLocationCandidates? {
        let encoded = EncodedPath(location)
        guard !encoded.isRoot else { return nil }
        return try withConnection(doing: "reading the change feed's location index") { connection in
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
    }

    private func withConnection<T>(doing: String, _ body: (PostgresConnection) throws -> T) throws -> T {
        guard !closed.load(ordering: .relaxed) else { throw StorageError(.closed, "namespace '\(namespace)' at \(endpoint) is closed.") }
        let connection = try endpoint.connect(doing: doing)
        defer { connection.close() }
        do {
            return try body(connection)
        } catch let error as PostgresError {
            throw StorageError(error, at: endpoint, doing: doing)
        }
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
