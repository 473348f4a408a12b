import Foundation
import HearthCore
@testable import HearthPostgres
import HearthStorage
import HearthTesting
import Testing

/// Rows of a query on the test server, through the engine's own connection type.
func query(_ url: String, _ sql: String, _ parameters: [PostgresParameter] = []) throws -> [PostgresRow] {
    let connection = try PostgresConnection(try PostgresEndpoint(url: url), deadline: .now + .seconds(5))
    defer { connection.close() }
    let results = try connection.run([PostgresStatement(sql, parameters)], deadline: .afterSilence(.seconds(30)))
    guard let result = results.first else { return [] }
    return (0..<Int32(result.rowCount)).map { PostgresRow(result: result, index: $0) }
}

/// A new database on the test server, for a test that must see only its own tables or connections: its
/// name and its URL.
func databaseOfItsOwn(on server: TemporaryPostgres, _ prefix: String) throws -> (name: String, url: String) {
    let name = prefix + "_" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
    _ = try query(server.url, "CREATE DATABASE \(name)")
    return (name, server.url.replacingOccurrences(of: "/postgres", with: "/\(name)"))
}

extension PostgresRow {
    func int64(_ column: Int32) -> Int64? { bytes(column).flatMap(PostgresBinary.decodeInt64) }
}

@Suite(.enabled(if: !TemporaryPostgres.isSkipped, "HEARTH_SKIP_POSTGRES=1 was set"))
struct PostgresStorageEngineTests {
    @Test func aNamespaceSurvivesCloseAndReopen() async throws {
        let fixture = PostgresFixture(server: try await TemporaryPostgres.shared())
        let engine = try fixture.open()
        let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
        try await database.set("users/ada", to: try Node(json: #"{".priority": 3, "name": "Ada", "born": 1815, "tags": {"0": "math", "1": "engines"}}"#))
        try await database.set("config/ratio", to: Node(0.75))
        try await database.set("config/on", to: Node(true))
        try await database.update("users", with: [("bob/name", Node("Bob")), ("ada/born", .empty)])
        engine.close()
        let reopened = try fixture.open()
        defer { reopened.close() }
        #expect(try reopened.load(progress: nil) == database.root)
    }

    @Test func namespacesInOneDatabaseDoNotSeeEachOther() async throws {
        let server = try await TemporaryPostgres.shared()
        let first = try PostgresStorageEngine(url: server.url, namespace: PostgresFixture.uniqueNamespace("a"))
        let second = try PostgresStorageEngine(url: server.url, namespace: PostgresFixture.uniqueNamespace("b"))
        defer { first.close(); second.close() }
        let one = DurableDatabase(engine: first, root: .empty)
        let two = DurableDatabase(engine: second, root: .empty)
        try await one.set("shared/key", to: Node("from one"))
        try await two.set("shared/key", to: Node("from two"))
        try await two.set("only/two", to: Node(2))
        // Removing everything in one namespace, and replacing everything, leave the other alone.
        try await one.set(.root, to: Node(["fresh": Node(1)]))
        #expect(try first.load(progress: nil) == Node(["fresh": Node(1)]))
        #expect(try second.load(progress: nil) == two.root)
        try first.replaceAll(with: Node(["imported": Node(true)]), progress: nil)
        #expect(try second.load(progress: nil).child(at: "shared/key") == Node("from two"))
        #expect(try first.load(progress: nil) == Node(["imported": Node(true)]))
    }

    @Test func theChangeLogHasConsecutiveSequencesThatReplayToTheTree() async throws {
        let server = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("log")
        let engine = try PostgresStorageEngine(url: server.url, namespace: namespace)
        let database = DurableDatabase(engine: engine, root: .empty)
        try await database.set("a", to: Node(1))
        // Concurrent writers, so that commits carry several batches.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask { for i in 0..<20 { try await database.set(Path("w\(writer)/k\(i)"), to: Node(i)) } }
            }
            try await group.waitForAll()
        }
        try await database.set("w0", to: try Node(json: #"{".priority": "p", "x": null, "y": [1, 2]}"#))
        engine.close()
        // An import is a change too.
        let reopened = try PostgresStorageEngine(url: server.url, namespace: namespace)
        let reopenedDatabase = DurableDatabase(engine: reopened, root: try reopened.load(progress: nil))
        try await reopenedDatabase.set("after/reopen", to: Node("x"))
        try reopened.replaceAll(with: try reopened.load(progress: nil), progress: nil)
        let expected = try reopened.load(progress: nil)
        reopened.close()

        let rows = try query(server.url, "SELECT seq, batch FROM hearth_changes WHERE namespace = $1 ORDER BY seq", [.text(namespace)])
        let sequences = rows.compactMap { $0.int64(0) }
        #expect(sequences == Array(1...Int64(rows.count)))
        let batchCount = 164  // a, 8 × 20, w0, after/reopen, the import
        #expect(rows.count < batchCount, "concurrent writes should share commits (\(rows.count) commits)")
        var replayed = Node.empty
        for row in rows {
            let batch = try WriteBatch(decoding: UnsafeRawBufferPointer(try #require(row.bytes(1))))
            replayed = replayed.applying(batch)
        }
        #expect(replayed == expected)
    }

    @Test func manyConcurrentWritesShareCommits() async throws {
        let fixture = PostgresFixture(server: try await TemporaryPostgres.shared())
        let engine = try PostgresStorageEngine(url: fixture.url, namespace: fixture.namespace)
        let database = DurableDatabase(engine: engine, root: .empty)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<16 {
                group.addTask { for i in 0..<50 { try await database.set(Path("w\(writer)/k\(i)"), to: Node(i)) } }
            }
            try await group.waitForAll()
        }
        let statistics = engine.commitStatistics
        engine.close()
        #expect(statistics.batches == 800)
        #expect(statistics.commits < statistics.batches)
        let reopened = try fixture.open()
        defer { reopened.close() }
        #expect(try reopened.load(progress: nil) == database.root)
    }

    @Test func stringsThatTextCannotHoldRoundTrip() async throws {
        let fixture = PostgresFixture(server: try await TemporaryPostgres.shared())
        let engine = try fixture.open()
        let database = DurableDatabase(engine: engine, root: .empty)
        try await database.set("nul", to: Node("before\u{0}after"))
        try await database.set("emoji", to: Node("🔥 ünïcödé"))
        try await database.set("p", to: try Node(json: #"{".priority": "a\u0000b", "c": 1}"#))
        engine.close()
        let reopened = try fixture.open()
        defer { reopened.close() }
        #expect(try reopened.load(progress: nil) == database.root)
    }

    @Test func loadReportsProgressAndBuildsALargeTree() async throws {
        let fixture = PostgresFixture(server: try await TemporaryPostgres.shared())
        // Seconds of blocking import and load: on a thread of its own (see offThePool).
        try await offThePool {
            let engine = try fixture.open()
            defer { engine.close() }
            var children = ChildrenMap()
            for i in 0..<120_000 { children[ChildKey("item\(i)")] = Node(["n": Node(i)]) }
            let root = Node(children: children)
            var imported: [LoadProgress] = []
            try engine.replaceAll(with: root, progress: { imported.append($0) })
            #expect(imported.last == LoadProgress(done: 120_000, total: 120_000))
            var loaded: [LoadProgress] = []
            #expect(try engine.load(progress: { loaded.append($0) }) == root)
            #expect(loaded.map(\.done) == [100_000, 120_000])
        }
    }

    @Test func backupWritesTheNamespaceAsExportJSON() async throws {
        let fixture = PostgresFixture(server: try await TemporaryPostgres.shared())
        let engine = try fixture.open()
        defer { engine.close() }
        let database = DurableDatabase(engine: engine, root: .empty)
        try await database.set("a", to: try Node(json: #"{".priority": 1, "b": "x", "c": [true, 2.5]}"#))
        let path = NSTemporaryDirectory() + "pg-backup-\(fixture.namespace).json"
        defer { unlink(path) }
        try engine.backup(to: path, progress: nil)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let restored = try bytes.withUnsafeBytes { try StorageJSON.read($0) }
        #expect(restored == database.root)
        #expect(access(path + ".partial", F_OK) != 0)
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o077 == 0, "a backup holds every value: owner-only")
    }

    @Test func compactVacuumsAndKeepsTheData() async throws {
        let fixture = PostgresFixture(server: try await TemporaryPostgres.shared())
        let engine = try fixture.open()
        defer { engine.close() }
        let database = DurableDatabase(engine: engine, root: .empty)
        try await database.set("a", to: Node(["b": Node(1), "c": Node("x")]))
        try await database.set("a/b", to: .empty)
        try engine.compact()
        try await database.set("d", to: Node(2))
        #expect(try engine.load(progress: nil) == database.root)
    }

    @Test func aServerThatRefusesConnectionsIsNamedWithWhatToCheck() throws {
        let port = Loopback.freePort()
        #expect {
            _ = try PostgresStorageEngine(url: "postgresql://hearth:s3cret@127.0.0.1:\(port)/hearth", namespace: "x")
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .unavailable && error.message.contains("postgresql://hearth@127.0.0.1:\(port)/hearth")
                && !error.message.contains("s3cret") && error.message.contains("start PostgreSQL")
        }
    }

    @Test func aWrongPasswordSaysSo() async throws {
        let server = try await TemporaryPostgres.shared()
        #expect {
            _ = try PostgresStorageEngine(url: "postgresql://hearth:wrong@127.0.0.1:\(server.port)/postgres", namespace: "x")
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .unavailable && error.message.contains("password") && !error.message.contains("wrong@")
        }
    }

    @Test func invalidNamespacesAreRefused() async throws {
        let server = try await TemporaryPostgres.shared()
        for name in ["", "a/b", "auth", String(repeating: "x", count: 64)] {
            #expect(throws: StorageError.self) { _ = try PostgresStorageEngine(url: server.url, namespace: name) }
        }
    }

    @Test func theUnixSocketWorksToo() async throws {
        let server = try await TemporaryPostgres.shared()
        let engine = try PostgresStorageEngine(url: server.socketURL, namespace: PostgresFixture.uniqueNamespace("s"))
        defer { engine.close() }
        try await engine.append(WriteBatch(operations: [.put("a", Node(1))]))
        #expect(try engine.load(progress: nil) == Node(["a": Node(1)]))
    }
}
