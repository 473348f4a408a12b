import HearthCore
import HearthSQL
import HearthStorage

/// The change feed indexed by location, for a location's history (docs/feed.md, "History of a
/// location"): `feed_locations(path, position)`, one row per location an entry wrote (keyed as `nodes`
/// is, ``EncodedPath``, so a location's subtree is one range), and `feed_locations_through`, the last
/// position indexed.
///
/// Built lazily and off the commit path: nothing is indexed until a history is asked for, so writes pay
/// nothing for it; then entries are indexed in steps (``FeedLocationLimits/entriesPerStep``) between commits on the
/// storage thread (one short transaction each, sorted by path so that a step touches few pages), and rows
/// of entries retention removed go in the same steps.
enum FeedLocations {
    static let schema = """
        CREATE TABLE IF NOT EXISTS feed_locations (path BLOB NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (path, position)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS feed_locations_position ON feed_locations (position);
        CREATE TABLE IF NOT EXISTS feed_locations_through (id INTEGER PRIMARY KEY CHECK (id = 1), position INTEGER NOT NULL);
        """
    /// The last position indexed (0: none; also before the index was ever built).
    static func through(_ connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        guard try connection.integer("SELECT count(*) FROM sqlite_master WHERE name = 'feed_locations_through'") > 0 else { return 0 }
        return try connection.integer("SELECT coalesce((SELECT position FROM feed_locations_through WHERE id = 1), 0)")
    }

    /// How many entries the feed holds after `position` (counted by whole rows), up to about `atMost`.
    static func entriesAfter(_ position: Int64, _ connection: SQLiteConnection, atMost: Int64) throws(SQLiteError) -> Int64 {
        let count = try connection.prepare("SELECT count FROM feed WHERE number > ?1 ORDER BY number")
        count.bind(1, int64: ChangeFeedPosition.commit(of: position))
        var total: Int64 = 0
        while total < atMost, try count.step() { total += count.int64(0) }
        return total
    }

    /// One step, on the writer connection: indexes the entries after the last one indexed, at most
    /// ``FeedLocationLimits/entriesPerStep`` (whole feed rows), and drops rows of entries retention
    /// removed, at most about ``FeedLocationLimits/droppedRowsPerStep``. Returns whether more of either
    /// is left. A step with nothing to do writes nothing (no commit to flush).
    static func step(_ connection: SQLiteConnection) throws -> Bool {
        try connection.execute(schema)
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let through = try self.through(connection)
            let trimmed = try FeedTable.trimmedThrough(connection)
            var moreToDrop = false
            if trimmed > 0 {
                // Through the position of the chunk's last row, or all of them when fewer are left.
                let chunk = try connection.prepare("SELECT position FROM feed_locations WHERE position <= ?1 ORDER BY position LIMIT 1 OFFSET ?2")
                chunk.bind(1, int64: trimmed)
                chunk.bind(2, int64: Int64(FeedLocationLimits.droppedRowsPerStep - 1))
                var bound = trimmed
                if try chunk.step() {
                    bound = chunk.int64(0)
                    moreToDrop = bound < trimmed
                }
                chunk.reset()
                let drop = try connection.prepare("DELETE FROM feed_locations WHERE position <= ?1")
                drop.bind(1, int64: bound)
                try drop.run()
            }
            var taken = FeedLocationRows(after: max(through, trimmed))
            let select = try connection.prepare("SELECT number, count, entries FROM feed WHERE number >= ?1 ORDER BY number")
            select.bind(1, int64: ChangeFeedPosition.commit(of: max(through, trimmed)))
            var more = false
            while try select.step() {
                guard !taken.isFull else {
                    more = true
                    break
                }
                try taken.take(row: select.int64(0), count: Int(select.int64(1)), bytes: UnsafeRawBufferPointer(select.bytes(2)))
            }
            select.reset()
            let insert = try connection.prepare("INSERT OR IGNORE INTO feed_locations (path, position) VALUES (?1, ?2)")
            for row in taken.sorted {
                insert.bind(1, blob: row.path)
                insert.bind(2, int64: row.position)
                try insert.run()
                insert.reset()
            }
            if taken.last > through {
                let mark = try connection.prepare("INSERT OR REPLACE INTO feed_locations_through (id, position) VALUES (1, ?1)")
                mark.bind(1, int64: taken.last)
                try mark.run()
            }
            try connection.execute("COMMIT")
            return more || moreToDrop
        } catch {
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// The positions of the entries below `before` (and after `trimmed`) that wrote at `location`, below
    /// it or above it, newest first, at most `limit`; nil for the root, or a location whose subtree has
    /// more than ``FeedLocationLimits/denseRows`` rows (its history reads the feed instead).
    static func candidates(
        _ connection: SQLiteConnection, location: Path, before: Int64, trimmed: Int64, limit: Int
    ) throws(SQLiteError) -> [Int64]? {
        let encoded = EncodedPath(location)
        guard !encoded.isRoot else { return nil }
        var positions: [Int64] = []
        let below = try connection.prepare(
            // `+position`: the range on the key, never the position index (which would walk the whole feed).
            "SELECT position FROM feed_locations WHERE path >= ?1 AND path < ?2 AND +position < ?3 AND +position > ?4 LIMIT \(FeedLocationLimits.denseRows + 1)")
        below.bind(1, blob: encoded.bytes)
        below.bind(2, blob: encoded.subtreeEnd)
        below.bind(3, int64: before)
        below.bind(4, int64: trimmed)
        while try below.step() { positions.append(below.int64(0)) }
        guard positions.count <= FeedLocationLimits.denseRows else { return nil }
        // Writes above it: each ancestor's own rows, the newest `limit`.
        let above = try connection.prepare(
            "SELECT position FROM feed_locations WHERE path = ?1 AND +position < ?2 AND +position > ?3 ORDER BY path DESC, position DESC LIMIT ?4")
        var ancestor = location
        while let parent = ancestor.parent {
            ancestor = parent
            above.bind(1, blob: EncodedPath(ancestor).bytes)
            above.bind(2, int64: before)
            above.bind(3, int64: trimmed)
            above.bind(4, int64: Int64(limit))
            while try above.step() { positions.append(above.int64(0)) }
            above.reset()
        }
        return FeedLocationLimits.newest(positions, limit: limit)
    }
}
