import Foundation
import HearthCore
@testable import HearthPostgres
import HearthStorage
import HearthSupport
import HearthTesting
import Synchronization
import Testing

/// Lines a test's `Log` received.
final class RecordedLog: Sendable {
    private let lines = Mutex<[String]>([])
    var log: Log { Log { [self] line in lines.withLock { $0.append(line) } } }
    var all: [String] { lines.withLock { $0 } }
}

@Suite(.enabled(if: !TemporaryPostgres.isSkipped, "HEARTH_SKIP_POSTGRES=1 was set"))
struct PostgresNamespaceCatalogueTests {
    @Test func aRegisteredNamespaceIsKnownAtOnceMeasuredSoonAndGoneWithItsRowsWhenDeleted() async throws {
        let server = try await TemporaryPostgres.shared()
        let catalogue = try await offThePool { try PostgresNamespaceCatalogue(url: server.url, namesInterval: .milliseconds(100)) }
        defer { catalogue.close() }
        let name = PostgresFixture.uniqueNamespace("catalogue")
        #expect(!catalogue.contains(name) && catalogue.bytes(name) == 0)
        try await offThePool { try catalogue.register(name) }
        #expect(catalogue.contains(name) && catalogue.names().contains(name), "known at once, not at the next refresh")

        let engine = try PostgresStorageEngine(url: server.url, namespace: name)
        let database = DurableDatabase(engine: engine, root: .empty)
        try await database.set("users/ada/name", to: Node("Ada"))
        _ = try await offThePool { try PostgresRulesStore(url: server.url).append(to: name, rules: "{}", format: "json", source: "{}", deployedAt: 1, keeping: 5) }
        engine.close()
        // users␁ada␁name␁ (15 bytes), "Ada" (3) and 8 for the record.
        #expect(await eventually { catalogue.bytes(name) == 15 + 3 + 8 }, "\(catalogue.bytes(name))")

        try await offThePool { try catalogue.delete(name) }
        #expect(!catalogue.contains(name) && catalogue.bytes(name) == 0 && !catalogue.names().contains(name))
        for table in ["hearth_records", "hearth_changes", "hearth_rules", "hearth_namespaces"] {
            let rows = try query(server.url, "SELECT count(*) FROM \(table) WHERE namespace = $1", [.text(name)])
            #expect(rows.first?.int64(0) == 0, "\(table)")
        }
        // Nothing brings it back: the next refreshes read the same.
        let tried = catalogue.refreshesTried.load(ordering: .relaxed)
        #expect(await eventually { catalogue.refreshesTried.load(ordering: .relaxed) >= tried + 2 })
        #expect(!catalogue.contains(name))
    }

    @Test func aNamespaceCreatedByAnotherProcessShowsAtTheNextRefresh() async throws {
        let server = try await TemporaryPostgres.shared()
        let catalogue = try await offThePool { try PostgresNamespaceCatalogue(url: server.url, namesInterval: .milliseconds(100)) }
        defer { catalogue.close() }
        let name = PostgresFixture.uniqueNamespace("elsewhere")
        try await offThePool { try PostgresNamespaces(url: server.url).register(name) }
        #expect(await eventually(5) { catalogue.contains(name) })
        try await offThePool { try PostgresNamespaces(url: server.url).delete(name) }
        #expect(await eventually(5) { !catalogue.contains(name) })
    }

    @Test func whilePostgresIsDownTheLastAnswersStayAndTheFailureIsLoggedOnce() async throws {
        let server = try await TemporaryPostgres.make()
        defer { server.destroy() }
        let recorded = RecordedLog()
        let catalogue = try await offThePool {
            try PostgresNamespaceCatalogue(url: server.url, log: recorded.log, namesInterval: .milliseconds(100))
        }
        defer { catalogue.close() }
        try await offThePool { try catalogue.register("kept") }
        try await offThePool { try server.stop() }
        #expect(await eventually(10) { !recorded.all.isEmpty })
        let tried = catalogue.refreshesTried.load(ordering: .relaxed)
        #expect(await eventually { catalogue.refreshesTried.load(ordering: .relaxed) >= tried + 3 })  // several failed refreshes
        #expect(catalogue.contains("kept") && catalogue.names() == ["kept"])
        let lines = recorded.all
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.contains("127.0.0.1:\(server.port)") == true && lines.first?.contains("last known namespace list") == true)
        #expect(lines.allSatisfy { !$0.contains(server.password) })
        // Asking is memory only: answered at once while PostgreSQL is down.
        let start = ContinuousClock.now
        for _ in 0..<1000 { _ = catalogue.contains("kept") }
        #expect(ContinuousClock.now - start < .milliseconds(200))
        try await offThePool { try server.start() }
        #expect(await eventually(10) { recorded.all.contains { $0.contains("answers again") } })
    }

    @Test func aStoppedServerOrAWrongPasswordFailTheFirstReadClearly() async throws {
        let server = try await TemporaryPostgres.shared()
        let wrong = server.url.replacingOccurrences(of: server.password, with: "not-the-password")
        do {
            _ = try await offThePool { try PostgresNamespaceCatalogue(url: wrong) }
            Issue.record("a wrong password was accepted")
        } catch let error as StorageError {
            #expect(error.code == .unavailable && error.message.contains("password") && !error.message.contains("not-the-password"), "\(error)")
        }
        let nobody = "postgresql://hearth:secret@127.0.0.1:\(Loopback.freePort())/postgres"
        do {
            _ = try await offThePool { try PostgresNamespaceCatalogue(url: nobody) }
            Issue.record("a catalogue opened with no server")
        } catch let error as StorageError {
            #expect(error.code == .unavailable && error.message.contains("Nothing accepts connections") && !error.message.contains("secret"), "\(error)")
        }
    }

    @Test func olderLayoutsAreMigratedAndANewerLayoutIsRefused() async throws {
        let server = try await TemporaryPostgres.shared()
        let url = try databaseOfItsOwn(on: server, "layout").url
        // Layout 1 as an older Hearth left it: records of a namespace, no catalogue, no rules, no feed, no
        // applied write IDs.
        let engine = try PostgresStorageEngine(url: url, namespace: "old")
        try await DurableDatabase(engine: engine, root: .empty).set("kept", to: Node(1))
        engine.close()
        _ = try query(url, "DROP TABLE hearth_namespaces, hearth_rules, hearth_feed, hearth_feed_trimmed, hearth_applied_writes, hearth_feed_locations, hearth_feed_locations_through")
        _ = try query(url, "UPDATE hearth_schema SET version = 1")

        let catalogue = try await offThePool { try PostgresNamespaceCatalogue(url: url) }
        catalogue.close()
        #expect(catalogue.names() == ["old"], "namespaces with records enter the catalogue")
        #expect(try query(url, "SELECT max(version)::bigint FROM hearth_schema").first?.int64(0) == 5, "1 → 2 → 3 → 4 → 5")
        #expect(try query(url, "SELECT count(*)::bigint FROM hearth_feed").first?.int64(0) == 0, "the feed's tables are there, empty")
        #expect(try query(url, "SELECT count(*)::bigint FROM hearth_applied_writes").first?.int64(0) == 0, "and the write IDs' table")
        #expect(try query(url, "SELECT count(*)::bigint FROM hearth_feed_locations").first?.int64(0) == 0, "and the feed's location index")
        #expect(try await offThePool { try PostgresRulesStore(url: url).versions(of: "old") }.isEmpty)

        _ = try query(url, "UPDATE hearth_schema SET version = 6")
        do {
            _ = try await offThePool { try PostgresNamespaceCatalogue(url: url) }
            Issue.record("a newer layout was used")
        } catch let error as StorageError {
            #expect(error.code == .corrupt && error.message.contains("newer Hearth"), "\(error)")
        }
    }
}
