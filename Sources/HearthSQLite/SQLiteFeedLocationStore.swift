import HearthCore
import HearthSQL
import HearthStorage

/// ``FeedLocations`` for a ``FeedLocationIndex``: steps run between commits on the storage thread
/// (``GroupCommitThread/exclusive(folding:_:)``), reads on the feed reader's connection.
struct SQLiteFeedLocationStore: FeedLocationStore {
    let writer: GroupCommitThread<SQLiteCommitter>
    let reader: FeedReader

    func find(of location: Path, before: Int64, limit: Int, catchUpMax: Int64) throws -> FeedLocationAnswer {
        let behind = try reader.withConnection { connection in
            try FeedLocations.entriesAfter(try FeedLocations.through(connection), connection, atMost: catchUpMax + 1)
        }
        guard behind <= catchUpMax else { return .farBehind }
        while try step() {}
        return .caughtUp(try reader.withConnection { connection -> FeedLocationCandidates? in
            let through = try FeedLocations.through(connection)
            let trimmed = try FeedTable.trimmedThrough(connection)
            return try FeedLocations.candidates(connection, location: location, before: min(before, through + 1), trimmed: trimmed, limit: limit)
                .map { FeedLocationCandidates(positions: $0, indexedThrough: through) }
        })
    }

    func step() throws -> Bool {
        try writer.exclusive(folding: false) { connection in try FeedLocations.step(connection) }
    }
}
