import Foundation
import HearthCore
@testable import HearthPostgres
import HearthStorage
import HearthTesting
import Testing

/// The change feed in PostgreSQL: entries keyed by the change log's sequence (one order for every node),
/// readable from a position by any engine on the namespace, trimmed by retention, emptied by an import.
@Suite(.enabled(if: !TemporaryPostgres.isSkipped, "HEARTH_SKIP_POSTGRES=1 was set"))
struct PostgresChangeFeedTests {
    private func note(_ path: String, _ value: Node, uid: String = "ada") -> ChangeFeedNote {
        ChangeFeedNote(time: 1_000, path: Path(path), data: .set(value), authType: .appUser, authId: uid, channel: "realtime")
    }

    @Test func twoNodesSeeOneFeedInTheChangeLogsOrder() async throws {
        let server = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("feed")
        let first = try PostgresStorageEngine(url: server.url, namespace: namespace)
        let second = try PostgresStorageEngine(url: server.url, namespace: namespace)
        defer { first.close(); second.close() }
        let one = DurableDatabase(engine: first, root: try first.load(progress: nil))
        _ = one.follow { _ in }
        let two = DurableDatabase(engine: second, root: try second.load(progress: nil))
        _ = two.follow { _ in }
        try await one.set("a", to: Node(1), feed: note("a", Node(1)))
        try await two.set("b", to: Node(2), feed: note("b", Node(2), uid: "bob"))
        try await one.set("a", to: Node(3), feed: note("a", Node(3)))

        let fromFirst = try await first.readFeed(after: 0, limit: 10)
        let fromSecond = try await second.readFeed(after: 0, limit: 10)
        #expect(fromFirst == fromSecond, "a position names the same entry on every node")
        let texts = fromFirst.entries.map { String(decoding: $0.json, as: UTF8.self) }
        #expect(texts.count == 3)
        #expect(texts[0].contains(#""path":"/a","data":1"#) && texts[1].contains(#""authId":"bob""#))
        #expect(texts[2].contains(#""before":{"/a":1}"#), "decided again on the other node's write if it had to be")
        #expect(fromFirst.entries.map(\.position) == fromFirst.entries.map(\.position).sorted())
        let rest = try await second.readFeed(after: fromFirst.entries[0].position, limit: 1)
        #expect(rest.entries == [fromFirst.entries[1]])
        // Where the feed ends, on every node: what a webhook deployed now starts after.
        #expect(rest.head == fromFirst.entries.last?.position && fromSecond.head == rest.head)
        let empty = try PostgresStorageEngine(url: server.url, namespace: PostgresFixture.uniqueNamespace("feed-empty"))
        defer { empty.close() }
        #expect(try await empty.readFeed(after: 0, limit: 0).head == 0)
    }

    @Test func retentionTrimsAndAnImportMakesReadersResync() async throws {
        let server = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("feedtrim")
        // Everything is over the size: the trim every 256th commit removes all but nothing newer.
        let engine = try PostgresStorageEngine(
            url: server.url, namespace: namespace, feedRetention: ChangeFeedRetention(maxAgeMilliseconds: 3_600_000, maxBytes: 1_000))
        defer { engine.close() }
        let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
        for index in 0..<300 {
            try await database.set(Path("i/\(index)"), to: Node(index), feed: note("i/\(index)", Node(index)))
        }
        let page = try await engine.readFeed(after: 0, limit: 1_000)
        #expect(page.trimmedThrough > 0 && page.needsResync(after: 0))
        #expect(page.entries.count < 300 && page.entries.allSatisfy { $0.position > page.trimmedThrough })
        #expect(String(decoding: try #require(page.entries.last).json, as: UTF8.self).contains(#""data":299"#))

        let last = try #require(page.entries.last).position
        try engine.replaceAll(with: Node(["fresh": Node(true)]), progress: nil)
        let afterImport = try await engine.readFeed(after: last, limit: 10)
        #expect(afterImport.entries.isEmpty && afterImport.needsResync(after: last))
    }

    /// Retention reads the two ends of the feed, never all of it: each trim looks at the oldest
    /// `trimRowsMax` rows (it runs every 256 commits, so it keeps up) and finds how many bytes are newer
    /// than a row from the running totals. Rows of layout 3, which had none, get them when it migrates.
    @Test func retentionLooksAtTheOldestRowsAndTheRunningTotals() async throws {
        let server = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("feedends")
        let engine = try PostgresStorageEngine(url: server.url, namespace: namespace)
        defer { engine.close() }
        let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
        for index in 0..<3 {
            try await database.set(Path("i/\(index)"), to: Node(index), feed: note("i/\(index)", Node(index)))
        }
        let totals = { try query(server.url, "SELECT upto, octet_length(entries)::bigint FROM hearth_feed WHERE namespace = $1 ORDER BY seq", [.text(namespace)]) }
        let sizes = try totals().map { try #require($0.int64(1)) }
        #expect(try totals().map { $0.int64(0) } == [sizes[0], sizes[0] + sizes[1], sizes[0] + sizes[1] + sizes[2]])

        // As layout 3 left them (no totals): the migration sums them.
        _ = try query(server.url, "UPDATE hearth_feed SET upto = 0 WHERE namespace = $1", [.text(namespace)])
        for statement in PostgresSchema.addFeedRunningTotals { _ = try query(server.url, statement.sql, statement.parameters) }
        #expect(try totals().map { $0.int64(0) } == [sizes[0], sizes[0] + sizes[1], sizes[0] + sizes[1] + sizes[2]])

        // 2,500 rows of 10 bytes after them; a size of 10,000 bytes keeps the newest 1,000. The first trim
        // deletes the oldest 1,000 it looks at (each beyond the size), the next the 503 left beyond it.
        _ = try query(server.url, """
            INSERT INTO hearth_feed (namespace, seq, time, count, entries, upto)
            SELECT $1, 1000 + n, 0, 1, '\\x00112233445566778899'::bytea, $2 + 10 * n FROM generate_series(1, 2500) AS n
            """, [.text(namespace), .int8(sizes.reduce(0, +))])
        let trim = PostgresSchema.trimFeed(namespace: namespace, before: -1, maxBytes: 10_000)
        let count = { try query(server.url, "SELECT count(*)::bigint FROM hearth_feed WHERE namespace = $1", [.text(namespace)]).first?.int64(0) }
        _ = try query(server.url, trim.sql, trim.parameters)
        #expect(try count() == 2_503 - 1_000)
        _ = try query(server.url, trim.sql, trim.parameters)
        #expect(try count() == 1_000)
        _ = try query(server.url, trim.sql, trim.parameters)
        #expect(try count() == 1_000, "nothing beyond the size is left")
        // By age: the rows are from 1970.
        let old = PostgresSchema.trimFeed(namespace: namespace, before: 1, maxBytes: 1 << 30)
        _ = try query(server.url, old.sql, old.parameters)
        #expect(try count() == 0)
    }

    /// Reads keep one connection between them (a connect costs several reads), and one PostgreSQL closed
    /// while it was idle is replaced without the read failing.
    @Test func readsKeepAConnectionAndReplaceOneThatWasClosed() async throws {
        let server = try await TemporaryPostgres.shared()
        // A database of its own, so that other tests' connections are not counted.
        let (name, url) = try databaseOfItsOwn(on: server, "kept")
        let engine = try PostgresStorageEngine(url: url, namespace: "kept")
        defer { engine.close() }
        let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
        try await database.set("a", to: Node(1), feed: note("a", Node(1)))
        // The reader's last statement of each read: where the feed ends.
        let readers = {
            try query(server.url, "SELECT pid::bigint FROM pg_stat_activity WHERE datname = $1 AND query LIKE '%ORDER BY seq DESC LIMIT 1'", [.text(name)])
                .compactMap { $0.int64(0) }
        }
        for _ in 0..<5 { #expect(try await engine.readFeed(after: 0, limit: 10).entries.count == 1) }
        let kept = try readers()
        #expect(kept.count == 1, "five reads, one connection: \(kept)")
        for pid in kept { _ = try query(server.url, "SELECT pg_terminate_backend($1::int)", [.int8(pid)]) }
        try await database.set("a", to: Node(2), feed: note("a", Node(2)))
        #expect(try await engine.readFeed(after: 0, limit: 10).entries.count == 2, "read again on a new connection")
        let replaced = try readers()
        #expect(replaced.count == 1 && replaced != kept)
    }
}
