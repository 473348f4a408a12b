import Foundation
@testable import HearthPostgres
import HearthTesting
import Synchronization
import Testing

/// Cluster leases: a dead node's onDisconnect operations go to exactly one other node, a node that
/// stops cleanly leaves none, and a forgotten session's are never run.
///
/// One test at a time: both use nodes named "a" and "b" in the shared server's tables, and a node that
/// stops deletes every row of its name, so run together one test's clean stop removed the other's
/// crashed node's operations before they could be claimed (seen once the suites ran longer).
@Suite(.serialized, .enabled(if: !TemporaryPostgres.isSkipped))
struct DisconnectLeasesTests {
    final class Claims: Sendable {
        let items = Mutex<[(node: String, namespace: String, operations: String)]>([])
        var all: [(node: String, namespace: String, operations: String)] { items.withLock { $0 } }
    }

    static func node(_ url: String, _ name: String, claims: Claims) throws -> PostgresDisconnectLeases {
        let leases = try PostgresDisconnectLeases(url: url, node: name, lease: .seconds(1), log: .silent)
        leases.start { namespace, operations in claims.items.withLock { $0.append((name, namespace, operations)) } }
        return leases
    }

    static func rows(_ url: String, node: String) throws -> Int {
        let rows = try query(url, "SELECT count(*) FROM hearth_ondisconnect WHERE node = $1", [.text(node)])
        return Int(rows.first?.int64(0) ?? -1)
    }

    @Test func aDeadNodesOperationsRunOnceOnAnotherNode() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("lease")
        let claims = Claims()
        let a = try Self.node(postgres.url, "a", claims: claims)
        a.record(session: "1", namespace: namespace, operations: #"[{"p":"/presence/ada","v":false,"admin":false}]"#)
        a.record(session: "2", namespace: namespace, operations: #"[{"p":"/x","v":1,"admin":true}]"#)
        a.record(session: "2", namespace: namespace, operations: nil)  // that connection closed normally
        let b = try Self.node(postgres.url, "b", claims: claims)
        let c = try Self.node(postgres.url, "c", claims: claims)
        defer { b.stop(); c.stop() }
        #expect(await eventually { (try? Self.rows(postgres.url, node: a.node)) == 1 })
        a.crashForTesting()
        let killed = ContinuousClock.now
        #expect(await eventually(20) { claims.all.contains { $0.namespace == namespace } })
        // A 1 s lease, renewed and claimed every 0.25 s: about 1.25 s alone; the bound leaves room for a
        // whole swift test run on two cores (3.3 s was measured there), and still tells a lease from never.
        let elapsed = ContinuousClock.now - killed
        #expect(elapsed < .seconds(10), "\(elapsed)")
        try await Task.sleep(for: .seconds(1.5))  // time for a second claim, which must find nothing
        let mine = claims.all.filter { $0.namespace == namespace }
        #expect(mine.count == 1)
        #expect(mine.first?.operations.contains("presence/ada") == true)
        #expect(mine.first?.node == "b" || mine.first?.node == "c")
    }

    @Test func aNodeThatStopsCleanlyLeavesNothingToRun() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("clean")
        let claims = Claims()
        let a = try Self.node(postgres.url, "a", claims: claims)
        let b = try Self.node(postgres.url, "b", claims: claims)
        defer { b.stop() }
        a.record(session: "1", namespace: namespace, operations: #"[{"p":"/y","v":2,"admin":true}]"#)
        #expect(await eventually { (try? Self.rows(postgres.url, node: a.node)) == 1 })
        await offThePool { a.stop() }
        #expect((try? Self.rows(postgres.url, node: a.node)) == 0)
        try await Task.sleep(for: .seconds(2))
        #expect(!claims.all.contains { $0.namespace == namespace })
    }
}

func eventually(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}
