import Foundation
import HearthCore
@testable import HearthPostgres
import HearthStorage
import HearthTesting
import Synchronization
import Testing

/// Two servers (two engines and databases in one process) writing one namespace in PostgreSQL: each
/// follows the other's commits, and writes decided on a stale tree are decided again.
@Suite(.enabled(if: !TemporaryPostgres.isSkipped, "HEARTH_SKIP_POSTGRES=1 was set"))
struct FollowingTests {
    /// A database over its own engine, loaded and following; `remote` collects what it heard.
    final class Server: Sendable {
        let engine: PostgresStorageEngine
        let database: DurableDatabase
        let heard = Heard()

        final class Heard: Sendable {
            let writes = Mutex<[DurableDatabase.RemoteWrite]>([])
        }

        /// With `finishing`, completions and remote commits finish on a serial queue of their own, as a
        /// server's loop finishes them (`DurableDatabase.init(engine:root:finishOn:)`).
        init(url: String, namespace: String, finishing: Bool = false) throws {
            engine = try PostgresStorageEngine(url: url, namespace: namespace)
            let loop = DispatchQueue(label: "test.loop")
            // A busy loop: each finish waits a little, so the engine hands remote commits over while
            // finishes of earlier commits still wait their turn (the order a busy server sees).
            let finisher: DurableDatabase.Finisher = { work in
                loop.async {
                    usleep(300)
                    work()
                }
            }
            database = DurableDatabase(engine: engine, root: try engine.load(progress: nil), finishOn: finishing ? finisher : nil)
            let heard = heard
            #expect(database.follow { write in heard.writes.withLock { $0.append(write) } })
        }

        var remote: [DurableDatabase.RemoteWrite] { heard.writes.withLock { $0 } }

        func close() { engine.close() }
    }

    
    /// Two servers on one new namespace.
    static func pair(_ prefix: String, finishing: Bool = false) async throws -> [Server] {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace(prefix)
        return [
            try Server(url: postgres.url, namespace: namespace, finishing: finishing),
            try Server(url: postgres.url, namespace: namespace, finishing: finishing),
        ]
    }

    /// Adds one to `counter` as a transaction does: a compare-and-set on its hash, again until it lands.
    static func increment(_ counter: Path, in database: DurableDatabase) async throws {
        while true {
            let current = database.root.child(at: counter)
            do {
                try await database.set(counter, to: Node(Int64(current.numberValue ?? 0) + 1), ifHash: current.hash)
                return
            } catch let error as DataError where error.code == .hashMismatch {
                try await Task.sleep(for: .milliseconds(Int.random(in: 1...5)))
            }
        }
    }

    @Test func aWriteOnOneServerReachesTheOtherInOrder() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("follow")
        let a = try Server(url: postgres.url, namespace: namespace)
        let b = try Server(url: postgres.url, namespace: namespace)
        defer { a.close(); b.close() }
        try await a.database.set("users/ada", to: try Node(json: #"{"name": "Ada", ".priority": 2}"#))
        // Woken by the notification, well before the 2 s sweep.
        let start = ContinuousClock.now
        #expect(await eventually { b.database.root.child(at: "users/ada/name") == Node("Ada") })
        #expect(ContinuousClock.now - start < .seconds(1.5), "the notification should wake the follower")
        #expect(b.database.root == a.database.root)
        let heard = b.remote
        #expect(heard.count == 1)
        #expect(heard.first?.locations == [Path("users/ada")])
        #expect(heard.first?.changes.changes.first?.new == a.database.root.child(at: "users/ada"))

        // Then the other way, with removals and a multi-path update.
        try await b.database.update("users", with: [("ada", .empty), ("bob/name", Node("Bob"))])
        #expect(await eventually { a.database.root == b.database.root })
        #expect(a.database.root == Node(["users": Node(["bob": Node(["name": Node("Bob")])])]))
        #expect(try a.engine.load(progress: nil) == a.database.root)
    }

    /// Writes that share one commit on A are heard on B one by one, as A's own listeners hear them:
    /// a listener of the location sees every value, not only the last.
    @Test func writesCommittedTogetherAreHeardOneByOne() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("together")
        let a = try Server(url: postgres.url, namespace: namespace)
        let b = try Server(url: postgres.url, namespace: namespace)
        defer { a.close(); b.close() }
        for value in 1...20 { a.database.set("score", to: Node(value)) { _ in } }
        await a.database.waitForPendingWrites()
        #expect(await eventually { b.database.root.child("score") == Node(20) })
        let heard = b.remote.map { $0.root.child("score") }
        #expect(heard == (1...20).map { Node($0) })
        #expect(a.engine.commitStatistics.commits < 20, "some of the writes should have shared a commit")
    }

    /// A namespace deleted (by another server) while an engine still has it open: the engine's next
    /// commit fails, clearly, and stores nothing, rather than bringing the namespace back unlisted.
    @Test func aCommitToADeletedNamespaceFailsAndStoresNothing() async throws {
        let servers = try await Self.pair("deleted")
        defer { servers.forEach { $0.close() } }
        let url = try await TemporaryPostgres.shared().url
        let namespace = servers[0].engine.namespace
        #expect(try PostgresNamespaces(url: url).contains(namespace), "an opened namespace is in the catalogue")
        try await servers[0].database.set("a", to: Node(1))
        try PostgresNamespaces(url: url).delete(namespace)
        await #expect {
            try await servers[1].database.set("b", to: Node(2))
        } throws: { ($0 as? StorageError)?.code == .notFound && "\($0)".contains("was deleted") }
        #expect(try PostgresStorageEngine(url: url, namespace: namespace).load(progress: nil) == .empty)
    }

    @Test func concurrentWritesFromBothServersAreAllKept() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("both")
        let servers = [try Server(url: postgres.url, namespace: namespace), try Server(url: postgres.url, namespace: namespace)]
        defer { servers.forEach { $0.close() } }
        // Every write is acknowledged (none fails because the other server committed first).
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, server) in servers.enumerated() {
                for writer in 0..<4 {
                    group.addTask {
                        for i in 0..<25 { try await server.database.set(Path("s\(index)/w\(writer)/k\(i)"), to: Node(i)) }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await eventually { servers[0].database.root == servers[1].database.root })
        let root = servers[0].database.root
        #expect(root.child("s0").childCount == 4 && root.child("s1").childCount == 4)
        #expect(root.child(at: "s1/w3").childCount == 25)
        #expect(try servers[0].engine.load(progress: nil) == root)
        let statistics = servers.map(\.engine.commitStatistics)
        #expect(statistics.map(\.supersededCommits).reduce(0, +) > 0, "the servers should have raced")
        // Writes at distinct locations commute: a group that lost the race committed again unchanged.
        #expect(statistics.map(\.recommittedCommits).reduce(0, +) == statistics.map(\.supersededCommits).reduce(0, +))
    }

    /// Compare-and-set increments (what a transaction sends) from both servers: every increment lands
    /// once, none is lost to a hash decided on a stale tree. With completions finished on a queue of
    /// their own (as on a server's loop), a write finishing between a remote commit's hand-over and its
    /// application once let the next writes be decided without it: 2 of 200 increments were lost.
    @Test(arguments: [false, true])
    func transactionsOnBothServersSumExactly(finishing: Bool) async throws {
        let servers = try await Self.pair("count", finishing: finishing)
        defer { servers.forEach { $0.close() } }
        let clients = 20, increments = 10
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                let database = servers[client % 2].database
                group.addTask {
                    for _ in 0..<increments {
                        try await Self.increment("counter", in: database)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await eventually { servers.allSatisfy { $0.database.root.child(at: "counter") == Node(Int64(clients * increments)) } })
        #expect(try servers[0].engine.load(progress: nil).child(at: "counter") == Node(Int64(clients * increments)))
    }

    /// Writes at distinct locations (which commute with the other server's and keep their batches)
    /// racing compare-and-set increments of one counter (which never commute): every write is kept, every
    /// increment counted once, and both servers' trees end as the records.
    @Test(arguments: [false, true])
    func commutingAndConflictingWritesTogether(finishing: Bool) async throws {
        let servers = try await Self.pair("mixed", finishing: finishing)
        defer { servers.forEach { $0.close() } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, server) in servers.enumerated() {
                let database = server.database
                for writer in 0..<4 {
                    group.addTask {
                        for i in 0..<20 { try await database.set(Path("items/s\(index)w\(writer)/k\(i)"), to: Node(i)) }
                    }
                }
                for _ in 0..<5 {
                    group.addTask {
                        for _ in 0..<10 {
                            try await Self.increment("counter", in: database)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await eventually { servers[0].database.root == servers[1].database.root })
        let root = servers[0].database.root
        #expect(root.child("counter") == Node(Int64(100)))
        #expect(root.child("items").childCount == 8 && root.child(at: "items/s1w3").childCount == 20)
        #expect(try servers[1].engine.load(progress: nil) == servers[1].database.root)
    }

    @Test func aServerThatStartsLaterLoadsAndContinuesFromTheLog() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("late")
        let a = try Server(url: postgres.url, namespace: namespace)
        defer { a.close() }
        for i in 0..<20 { try await a.database.set(Path("k\(i)"), to: Node(i)) }
        let b = try Server(url: postgres.url, namespace: namespace)
        defer { b.close() }
        #expect(b.database.root == a.database.root)
        try await a.database.set("after", to: Node(true))
        #expect(await eventually { b.database.root == a.database.root })
        // B heard only what came after its snapshot: nothing applied twice.
        #expect(b.remote.flatMap(\.locations) == [Path("after")])
    }

    /// A write with its client's ID (HearthClient's `wid`), answered when durable.
    static func set(
        _ path: Path, to value: Node, writeID: String, in database: DurableDatabase
    ) async throws -> DurableDatabase.CommittedWrite {
        try await withCheckedThrowingContinuation { continuation in
            database.set(path, to: value, now: 1, writeID: writeID) { continuation.resume(with: $0) }
        }
    }

    /// A client sends a write again to another server (it lost the first answer): that server knows from
    /// the change log that the first applied it, and acknowledges it without applying it again. So does a
    /// server that fell behind the log's trimmed rows (the IDs come with the snapshot), and one that
    /// starts later (from `hearth_applied_writes`).
    @Test func aWriteSentAgainToAnotherServerIsAcknowledgedNotAppliedAgain() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("resent")
        let increment = try Node(json: #"{".sv": {"increment": 1}}"#)
        let a = try Server(url: postgres.url, namespace: namespace)
        defer { a.close() }
        // Loaded now, following only later: it will find the log trimmed below what it needs.
        let lateEngine = try PostgresStorageEngine(url: postgres.url, namespace: namespace)
        defer { lateEngine.close() }
        let late = DurableDatabase(engine: lateEngine, root: try lateEngine.load(progress: nil))
        let b = try Server(url: postgres.url, namespace: namespace)
        defer { b.close() }

        #expect(try await Self.set("count", to: increment, writeID: "w-1", in: a.database).appliedElsewhere == false)
        #expect(await eventually { b.database.root.child("count") == Node(1) })
        #expect(try await Self.set("count", to: increment, writeID: "w-1", in: b.database).appliedElsewhere)
        #expect(try await Self.set("count", to: increment, writeID: "w-2", in: b.database).appliedElsewhere == false)
        #expect(await eventually { a.database.root.child("count") == Node(2) })

        // The rows the late server needs are gone (as retention trims them): it reloads the snapshot.
        _ = try query(postgres.url, "DELETE FROM hearth_changes WHERE namespace = $1 AND seq < (SELECT max(seq) FROM hearth_changes WHERE namespace = $1)", [.text(namespace)])
        #expect(late.follow { _ in })
        await withCheckedContinuation { (caughtUp: CheckedContinuation<Void, Never>) in late.catchUp { _ in caughtUp.resume() } }
        #expect(await eventually { late.root.child("count") == Node(2) })
        #expect(try await Self.set("count", to: increment, writeID: "w-1", in: late).appliedElsewhere)

        let restarted = try Server(url: postgres.url, namespace: namespace)
        defer { restarted.close() }
        // Its engine's IDs are what a server remembers on opening (the server checks them before deciding).
        #expect(try restarted.engine.rememberedWriteIDs() == ["w-1", "w-2"])
        #expect(a.database.root.child("count") == Node(2))
    }
}
