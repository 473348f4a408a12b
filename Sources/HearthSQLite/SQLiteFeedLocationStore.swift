import HearthCore
import HearthSQL
import HearthStorage

/// ``FeedLocations`` for a ``FeedLocationIndex``: steps run between commits on the storage thread
/// (``GroupCommitThread/exclusive(folding:_:)``), reads on the feed reader's connection.
struct SQLiteFeedLocationStore: FeedLocationStore {
    let writer: GroupCommitThread<SQLiteCommitter>
    let reader: FeedReader

    func entriesBehind(atMost: Int64) throws -> Int64 {
        try reader.withConnection { connection in
            try FeedLocations.entriesAfter(try FeedLocations.through(connection), connection, atMost: atMost)
        }
    }

    func step() throws -> Bool {
        try writer.exclusive(folding: false) { connection in try FeedLocations.step(connection) }
    }

    func candidates(of location: Path, before: Int64, limit: Int) throws -> FeedLocationCandidates? {
        try reader.withConnection { connection -> FeedLocationCandidates? in
            let through = try FeedLocations.through(connection)
            let trimmed = try connection.integer("SELECT coalesce((SELECT through FROM feed_trimmed WHERE id = 1), 0)")
            return try FeedLocations.candidates(connection, location: location, before: min(before, through + 1), trimmed: trimmed, limit: limit)
                .map { FeedLocationCandidates(positions: $0, indexedThrough: through) }
        }
    }
}
