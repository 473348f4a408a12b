import HearthCore
@testable import HearthPostgres
import HearthStorage
import HearthStorageTesting
import HearthTesting
import Testing

/// The change feed indexed by location in PostgreSQL: built when a history first asks, by whichever node
/// asks (each step under the namespace's lock, so two nodes asking at once index each entry once), the
/// same candidates from every node, their entries read in one statement, and nothing retention removed.
@Suite(.enabled(if: !TemporaryPostgres.isSkipped, "HEARTH_SKIP_POSTGRES=1 was set"))
struct PostgresFeedLocationsTests {
    private func set(_ database: DurableDatabase, _ path: String, _ value: Node) async throws {
        try await database.set(Path(path), to: value, feed: ChangeFeedNote(time: 1_000, path: Path(path), data: .set(value), authType: .admin, channel: "rest"))
    }

    private func candidates(_ engine: PostgresStorageEngine, _ path: String, before: Int64 = .max, limit: Int = 100) async throws -> FeedLocationCandidates? {
        try await engine.feedLocations(of: Path(path), before: before, limit: limit)
    }

    @Test func twoNodesIndexEachEntryOnceAndAnswerAlike() async throws {
        let server = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("locations")
        let a = try FollowingTests.Server(url: server.url, namespace: namespace)
        let b = try FollowingTests.Server(url: server.url, namespace: namespace)
        defer { a.close(); b.close() }
        let (first, one, second, two) = (a.engine, a.database, b.engine, b.database)
        try await set(one, "jokes/j1/text", Node("a"))                                  // below /jokes/j1
        for n in 0..<50 { try await set(n % 2 == 0 ? one : two, "other/o\(n)", Node(n)) }
        try await set(two, "jokes", Node(["j1": Node(["text": Node("b")])]))           // above
        try await set(one, "jokes/j2", Node(1))                                        // beside: not j1's
        let positions = try await first.readFeed(after: 0, limit: 1_000).entries.map(\.position)
        #expect(positions.count == 53)

        async let fromFirst = candidates(first, "jokes/j1")
        async let fromSecond = candidates(second, "jokes/j1")
        let (found, alike) = try await (fromFirst, fromSecond)
        #expect(found == alike, "the same index whichever node built it")
        #expect(found?.positions == [positions[51], positions[0]] && found?.indexedThrough == positions.last)
        let rows = try query(server.url, "SELECT count(*)::bigint FROM hearth_feed_locations WHERE namespace = $1", [.text(namespace)])
        #expect(rows.first?.int64(0) == 53, "one row per location an entry wrote, none twice")
        #expect(try await candidates(first, "jokes/j1", before: positions[51])?.positions == [positions[0]])
        #expect(try await candidates(second, "jokes/j1", limit: 1)?.positions == [positions[51]])
        #expect(try await candidates(first, "/") == nil, "the root's history is the feed itself")

        let read = try await second.readFeed(at: [positions[51], positions[0], positions[30]])
        #expect(read.entries.map(\.position) == [positions[0], positions[30], positions[51]])
        #expect(String(decoding: read.entries[2].json, as: UTF8.self).contains(#""path":"/jokes""#))

        // Later writes are indexed when asked again.
        try await set(two, "jokes/j1/text", Node("c"))
        let later = try #require(try await candidates(first, "jokes/j1"))
        #expect(later.positions.count == 3 && later.indexedThrough > (found?.indexedThrough ?? .max))
    }

    /// A commit can hold more entries than a step indexes (8,192 against 4,096): the steps after the one
    /// that took it go on to the rows after it.
    @Test func aCommitOfMoreEntriesThanAStepDoesNotStopTheIndex() async throws {
        let server = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("locationsbig")
        let engine = try PostgresStorageEngine(url: server.url, namespace: namespace)
        defer { engine.close() }
        let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
        // The feed held locked, the first commit waits, and the writes taken meanwhile make one commit.
        let holder = try PostgresConnection(try PostgresEndpoint(url: server.url), deadline: .now + .seconds(5))
        defer { holder.close() }
        _ = try holder.run([PostgresStatement("BEGIN"), PostgresStatement("LOCK TABLE hearth_feed IN SHARE MODE")], deadline: .afterSilence(.seconds(5)))
        let writes = FeedLocationLimits.entriesPerStep + 2_000
        let burst = WriteBurst(database, count: writes, path: { Path("big/k\($0)") }, value: { Node($0) })
        _ = try holder.run([PostgresStatement("COMMIT")], deadline: .afterSilence(.seconds(5)))
        await burst.finished()
        let largest = try query(server.url, "SELECT max(count)::bigint FROM hearth_feed WHERE namespace = $1", [.text(namespace)])
        try #require((largest.first?.int64(0) ?? 0) > Int64(FeedLocationLimits.entriesPerStep), "one commit took more writes than a step indexes")
        #expect(try await candidates(engine, "big/k0")?.positions.count == 1)

        try await set(database, "after", Node(true))
        let last = try #require(try await engine.readFeed(after: 0, limit: writes + 10).entries.last?.position)
        let found = try #require(try await candidates(engine, "after"))
        #expect(found.positions == [last] && found.indexedThrough == last)
    }

    /// More index rows of removed entries than a step drops go over several steps before a history
    /// answers.
    @Test func removedEntriesRowsGoInChunks() async throws {
        let server = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("locationschunks")
        let engine = try PostgresStorageEngine(url: server.url, namespace: namespace)
        defer { engine.close() }
        let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
        await WriteBurst(database, count: FeedLocationLimits.droppedRowsPerStep + 5_000, path: { Path("old/\($0)") }, value: { Node($0) }).finished()
        try await set(database, "kept", Node(true))
        #expect(try await candidates(engine, "old/0")?.positions.count == 1)
        let kept = try #require(try await candidates(engine, "kept")?.positions.first)
        // Retention as a trim leaves it: every entry before the last gone, and where they ended recorded.
        let trimmed = kept - 1
        _ = try query(server.url, "DELETE FROM hearth_feed WHERE namespace = $1 AND seq < $2", [.text(namespace), .int8(ChangeFeedPosition.commit(of: kept))])
        _ = try query(server.url, "INSERT INTO hearth_feed_trimmed (namespace, through) VALUES ($1, $2)", [.text(namespace), .int8(trimmed)])

        #expect(try await candidates(engine, "kept")?.positions == [kept])
        let left = try query(server.url, "SELECT count(*)::bigint FROM hearth_feed_locations WHERE namespace = $1 AND position <= $2", [.text(namespace), .int8(trimmed)])
        #expect(left.first?.int64(0) == 0)
    }

    @Test func whatRetentionRemovedIsNoLongerACandidateNorARow() async throws {
        let server = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("locationstrim")
        let engine = try PostgresStorageEngine(url: server.url, namespace: namespace)
        defer { engine.close() }
        let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
        for n in 0..<10 { try await set(database, "a", Node(n)) }
        let positions = try await engine.readFeed(after: 0, limit: 100).entries.map(\.position)
        #expect(try await candidates(engine, "a")?.positions.count == 10)
        // Retention as a trim leaves it: the oldest rows gone and where they ended recorded.
        _ = try query(server.url, "DELETE FROM hearth_feed WHERE namespace = $1 AND seq <= $2", [.text(namespace), .int8(ChangeFeedPosition.commit(of: positions[5]))])
        _ = try query(server.url, "INSERT INTO hearth_feed_trimmed (namespace, through) VALUES ($1, $2)", [.text(namespace), .int8(positions[5])])
        try await set(database, "a", Node(10))
        let found = try #require(try await candidates(engine, "a"))
        #expect(found.positions.count == 5 && found.positions.allSatisfy { $0 > positions[5] })
        let rows = try query(server.url, "SELECT min(position)::bigint FROM hearth_feed_locations WHERE namespace = $1", [.text(namespace)])
        #expect(rows.first?.int64(0) == positions[6], "the index's rows of removed entries went in the step")
        let read = try await engine.readFeed(at: [positions[2], positions[7]])
        #expect(read.entries.map(\.position) == [positions[7]] && read.trimmedThrough == positions[5])
    }
}
