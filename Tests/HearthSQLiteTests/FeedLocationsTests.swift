import Foundation
import HearthCore
import HearthSQL
import HearthSQLite
import HearthStorage
import HearthStorageTesting
import Testing

/// The change feed indexed by location: a history's candidates are the entries that wrote at a location,
/// below it or above it, newest first, caught up with the feed when asked, without what retention removed.
struct FeedLocationsTests {
    private func set(_ database: DurableDatabase, _ path: String, _ value: Node) async throws {
        try await database.set(Path(path), to: value, feed: ChangeFeedNote(time: 1_000, path: Path(path), data: .set(value), authType: .admin, channel: "rest"))
    }

    private func candidates(_ engine: SQLiteStorageEngine, _ path: String, before: Int64 = .max, limit: Int = 100) async throws -> FeedLocationCandidates? {
        try await engine.feedLocations(of: Path(path), before: before, limit: limit)
    }

    @Test func aLocationsEntriesAreFoundAtAboveAndBelowItNewestFirst() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = try SQLiteStorageEngine(directory: directory, namespace: "index")
        let database = DurableDatabase(engine: engine, root: .empty)
        try await set(database, "jokes/j1/text", Node("a"))        // below /jokes/j1
        for n in 0..<50 { try await set(database, "other/o\(n)", Node(n)) }
        try await set(database, "jokes", Node(["j1": Node(["text": Node("b")])]))  // above
        try await database.update(Path("jokes/j1"), with: [(Path("votes"), Node(3)), (Path("text"), Node("c"))],
                                  feed: ChangeFeedNote(time: 1_000, path: Path("jokes/j1"), data: .update([.init(path: "votes", value: Node(3)), .init(path: "text", value: Node("c"))]), authType: .admin, channel: "rest"))
        try await set(database, "jokes/j2", Node(1))             // beside: not j1's
        let page = try await engine.readFeed(after: 0, limit: 1000)
        let positions = page.entries.map(\.position)

        let found = try #require(try await candidates(engine, "jokes/j1"))
        #expect(found.indexedThrough == positions.last)
        #expect(found.positions == [positions[52], positions[51], positions[0]], "the update, the set above, the set below")
        #expect(try await candidates(engine, "jokes/j1", before: positions[52])?.positions == [positions[51], positions[0]])
        #expect(try await candidates(engine, "jokes/j1", limit: 2)?.positions == [positions[52], positions[51]])
        #expect(try await candidates(engine, "/") == nil, "the root's history is the feed itself")
        // Later writes are indexed when asked again.
        try await set(database, "jokes/j1/text", Node("d"))
        let later = try #require(try await candidates(engine, "jokes/j1"))
        #expect(later.positions.count == 4 && later.indexedThrough > found.indexedThrough)
        engine.close()
    }

    /// More index rows of removed entries than a step drops go over several steps, all of them before a
    /// history answers; a history of a caught-up index commits nothing (SQLite's data_version, which
    /// counts other connections' commits, stays).
    @Test func removedEntriesRowsGoInChunksAndACaughtUpStepWritesNothing() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = try SQLiteStorageEngine(directory: directory, namespace: "chunks", feedRetention: ChangeFeedRetention(maxAgeMilliseconds: 3_600_000, maxBytes: 3_000_000))
        defer { engine.close() }
        let database = DurableDatabase(engine: engine, root: .empty)
        let first = FeedLocationLimits.droppedRowsPerStep + 5_000
        await WriteBurst(database, count: first, path: { Path("old/\($0)") }, value: { _ in Node(1) }).finished()
        #expect(try await candidates(engine, "old/0")?.positions.count == 1)
        let observer = try SQLiteConnection(path: directory + "/chunks.sqlite", create: false)
        defer { observer.close() }
        let indexed = try observer.integer("SELECT count(*) FROM feed_locations")
        #expect(indexed == Int64(first))
        // Large enough values that retention removes every entry of the first burst; fewer entries than
        // a step indexes, so that the drop's own chunks are what takes more steps.
        let large = Node(String(repeating: "x", count: 1_200))
        await WriteBurst(database, count: 3_000, path: { Path("new/\($0)") }, value: { _ in large }).finished()
        let trimmed = try await engine.readFeed(after: Int64.max, limit: 0).trimmedThrough
        #expect(try observer.integer("SELECT count(*) FROM feed WHERE number <= \(ChangeFeedPosition.commit(of: trimmed))") == 0)
        #expect(try observer.integer("SELECT count(*) FROM feed_locations WHERE position <= \(trimmed)") == indexed, "nothing dropped before a history asks")

        let removed = try await candidates(engine, "old/0")
        #expect(removed?.positions.isEmpty ?? true, "its entry was removed")
        #expect(try observer.integer("SELECT count(*) FROM feed_locations WHERE position <= \(trimmed)") == 0)
        let found = try #require(try await candidates(engine, "new/2999"))
        #expect(found.positions.count == 1)

        let version = try observer.integer("PRAGMA data_version")
        #expect(try await candidates(engine, "new/2998")?.positions.count == 1)
        #expect(try observer.integer("PRAGMA data_version") == version, "a caught-up index's step committed nothing")
    }

    @Test func whatRetentionRemovedIsNoLongerACandidate() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = try SQLiteStorageEngine(directory: directory, namespace: "trimmed", feedRetention: ChangeFeedRetention(maxAgeMilliseconds: 3_600_000, maxBytes: 2_000))
        let database = DurableDatabase(engine: engine, root: .empty)
        try await set(database, "a", Node(1))
        #expect(try await candidates(engine, "a")?.positions.count == 1)
        for n in 0..<60 { try await set(database, "b/\(n)", Node(String(repeating: "x", count: 50))) }
        try await set(database, "a", Node(2))
        let page = try await engine.readFeed(after: Int64.max, limit: 0)
        #expect(page.trimmedThrough > 0)
        let found = try #require(try await candidates(engine, "a"))
        #expect(found.positions.count == 1 && found.positions[0] > page.trimmedThrough)
        engine.close()
    }
}
