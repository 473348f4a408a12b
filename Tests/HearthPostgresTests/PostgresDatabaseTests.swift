import Dispatch
import Foundation
import HearthPostgres
import HearthStorage
import HearthTesting
import Synchronization
import Testing

/// The pool other modules use PostgreSQL through (`PostgresDatabase`): statements, typed rows,
/// transactions, unique violations, and connections replaced after PostgreSQL restarts.
@Suite(.enabled(if: !TemporaryPostgres.isSkipped, "HEARTH_SKIP_POSTGRES=1 was set"))
struct PostgresDatabaseTests {
    /// A table of the test's own on the shared server.
    static func table(_ database: PostgresDatabase) throws -> String {
        let name = "pool_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        _ = try database.query(
            "CREATE TABLE \(name) (id text PRIMARY KEY, n bigint, flag boolean, data bytea, CONSTRAINT \(name)_n UNIQUE (n))",
            doing: "creating a test table")
        return name
    }

    @Test func rowsReadBackTypedAndNullsAsNil() async throws {
        let database = try PostgresDatabase(url: try await TemporaryPostgres.shared().url, connectionsMax: 2)
        defer { database.close() }
        let table = try Self.table(database)
        _ = try database.run(
            [
                PostgresStatement("INSERT INTO \(table) VALUES ($1, $2, $3, $4)", [.text("a"), .int8(-7), .boolean(true), .bytea([0, 1, 255])]),
                PostgresStatement("INSERT INTO \(table) VALUES ($1, $2, $3, $4)", [.text("b ü\u{1F525}"), .int8(nil), .boolean(nil), .bytea(nil)]),
            ], doing: "inserting")
        let rows = try database.query("SELECT id, n, flag, data FROM \(table) ORDER BY id", doing: "reading")
        #expect(rows.count == 2)
        #expect(try rows[0].string(at: 0) == "a" && rows[0].int64(at: 1) == -7 && rows[0].boolean(at: 2) == true)
        #expect(try rows[0].bytes(at: 3) == [0, 1, 255])
        #expect(try rows[1].string(at: 0) == "b ü\u{1F525}" && rows[1].int64(at: 1) == nil && rows[1].boolean(at: 2) == nil)
        // A column read as another type, or one that is not there, is an error, never a trap.
        #expect { try rows[0].int64(at: 0) } throws: { ($0 as? StorageError)?.code == .corrupt }
        #expect { try rows[0].string(at: 9) } throws: { ($0 as? StorageError)?.code == .corrupt }
    }

    @Test func transactionsCommitOrRollBackWhole() async throws {
        struct Refused: Error {}
        let database = try PostgresDatabase(url: try await TemporaryPostgres.shared().url, connectionsMax: 1)
        defer { database.close() }
        let table = try Self.table(database)
        let kept = try database.transaction(doing: "inserting") { transaction in
            _ = try transaction.run([PostgresStatement("INSERT INTO \(table) (id, n) VALUES ('kept', 1)")])
            return try transaction.run([PostgresStatement("SELECT count(*) FROM \(table)")])[0].first?.int64(at: 0)
        }
        #expect(kept == 1)
        #expect(throws: Refused.self) {
            try database.transaction(doing: "inserting") { transaction in
                _ = try transaction.run([PostgresStatement("INSERT INTO \(table) (id, n) VALUES ('dropped', 2)")])
                throw Refused()
            }
        }
        // A unique violation names its constraint, and rolls back the pipeline it was in.
        #expect {
            _ = try database.run(
                [PostgresStatement("INSERT INTO \(table) (id, n) VALUES ('also dropped', 3)"),
                 PostgresStatement("INSERT INTO \(table) (id, n) VALUES ('clash', 1)")],
                doing: "inserting")
        } throws: { ($0 as? PostgresUniqueViolation)?.constraint == "\(table)_n" }
        let ids = try database.query("SELECT id FROM \(table) ORDER BY id", doing: "reading").map { try $0.string(at: 0) }
        #expect(ids == ["kept"])
        #expect(database.connectionsOpened == 1, "every failure above left the connection usable")
    }

    /// An idle connection that PostgreSQL closed (a restart: every backend says goodbye and closes its
    /// socket before `pg_ctl stop` returns) is replaced before use: the first call after it succeeds.
    /// (A server of its own: a session ended with pg_terminate_backend leaves its process, and socket, a
    /// moment after it leaves pg_stat_activity, so nothing outside could tell when the close arrived.)
    @Test func idleConnectionsClosedByARestartAreReplaced() async throws {
        let server = try await TemporaryPostgres.make()
        defer { server.destroy() }
        let database = try PostgresDatabase(url: server.url, connectionsMax: 2)
        defer { database.close() }
        #expect(try database.query("SELECT 1::bigint", doing: "reading").first?.int64(at: 0) == 1)
        try await offThePool { try server.restart() }
        #expect(try database.query("SELECT 2::bigint", doing: "reading").first?.int64(at: 0) == 2)
        #expect(database.connectionsOpened == 2)
    }

    /// More callers than connections wait their turn (bounded), and never open more.
    @Test func callersBeyondThePoolWaitForAConnection() async throws {
        let url = try await TemporaryPostgres.shared().url
        let database = try PostgresDatabase(url: url, connectionsMax: 2)
        defer { database.close() }
        let failures = await offThePool { () -> Int in
            let failed = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                for _ in 0..<20 {
                    do { _ = try database.query("SELECT pg_sleep(0.001)", doing: "sleeping") } catch { failed.add(1, ordering: .relaxed) }
                }
            }
            return failed.load(ordering: .relaxed)
        }
        #expect(failures == 0)
        #expect(database.connectionsOpened <= 2)
    }
}
