import Foundation
import HearthCore
import HearthStorage
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
@Suite(.serialized, .enabled(if: !TemporaryPostgres.isSkipped, "HEARTH_SKIP_POSTGRES=1 was set"))
struct DisconnectLeasesTests {
    typealias Claim = (node: String, namespace: String, claim: LedgerEntry, operations: String)

    final class Claims: Sendable {
        let items = Mutex<[Claim]>([])
        var all: [Claim] { items.withLock { $0 } }
        func of(_ namespace: String) -> [Claim] { all.filter { $0.namespace == namespace } }
    }

    static func node(_ url: String, _ name: String, claims: Claims) throws -> PostgresDisconnectLeases {
        let leases = try PostgresDisconnectLeases(url: url, node: name, lease: .seconds(1), log: .silent)
        leases.start { namespace, claim, operations in claims.items.withLock { $0.append((name, namespace, claim, operations)) } }
        return leases
    }

    /// The rows of `node`'s own connections (not those it claimed from dead nodes).
    static func rows(_ url: String, node: String) throws -> Int {
        let rows = try query(url, "SELECT count(*) FROM hearth_ondisconnect WHERE node = $1 AND session NOT LIKE 'claimed %'", [.text(node)])
        return Int(rows.first?.int64(0) ?? -1)
    }

    /// Waits until each node has claimed (found or not) twice more than now: the event that shows
    /// nothing more was there to claim, where a wait for time only hoped so.
    static func claimTwiceMore(_ nodes: PostgresDisconnectLeases...) async -> Bool {
        let targets = nodes.map { ($0, $0.claimsMade.load(ordering: .relaxed) + 2) }
        return await eventually(20) { targets.allSatisfy { node, target in node.claimsMade.load(ordering: .relaxed) >= target } }
    }

    static func exists(_ url: String, _ claim: LedgerEntry) throws -> Bool {
        let rows = try query(url, "SELECT count(*) FROM hearth_ondisconnect WHERE node = $1 AND session = $2", [.text(claim.owner), .text(claim.key)])
        return rows.first?.int64(0) == 1
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
        // Two more claims by each survivor, which must find nothing.
        #expect(await Self.claimTwiceMore(b, c))
        let mine = claims.of(namespace)
        #expect(mine.count == 1)
        #expect(mine.first?.operations.contains("presence/ada") == true)
        #expect(mine.first?.node == "b" || mine.first?.node == "c")
        // Not run here: dropped, as a refused write's are, so no later node claims them.
        let claim = try #require(mine.first?.claim)
        #expect(try Self.exists(postgres.url, claim))
        (mine.first?.node == "b" ? b : c).drop(claim)
        #expect(await eventually { (try? Self.exists(postgres.url, claim)) == false })
    }

    /// The claimant dies too, before the write that runs the operations commits: the next node claims
    /// them again. Once a commit carries them out, they are gone for good.
    @Test func operationsRunOnceEvenWhenTheirClaimantDiesFirst() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("twice")
        let claims = Claims()
        let a = try Self.node(postgres.url, "a", claims: claims)
        a.record(session: "1", namespace: namespace, operations: #"[{"p":"/presence/ada","v":false,"admin":true}]"#)
        #expect(await eventually { (try? Self.rows(postgres.url, node: a.node)) == 1 })
        a.crashForTesting()
        let b = try Self.node(postgres.url, "b", claims: claims)
        #expect(await eventually(20) { claims.of(namespace).count == 1 })
        b.crashForTesting()  // before running them
        let c = try Self.node(postgres.url, "c", claims: claims)
        defer { c.stop() }
        #expect(await eventually(20) { claims.of(namespace).count == 2 })
        let taken = claims.of(namespace)
        #expect(taken.map(\.node) == ["b", "c"])
        #expect(taken[0].operations == taken[1].operations && taken[1].operations.contains("presence/ada"))
        #expect(taken[1].claim.owner == c.node)

        // The write that runs them carries the claim out in its commit.
        let engine = try PostgresStorageEngine(url: postgres.url, namespace: namespace)
        var batch = WriteBatch(operations: [.put("presence/ada", Node(false))])
        batch.carriesOut = [taken[1].claim]
        try await engine.append(batch)
        engine.close()
        #expect(try !Self.exists(postgres.url, taken[1].claim))
        let d = try Self.node(postgres.url, "d", claims: claims)
        defer { d.stop() }
        #expect(await Self.claimTwiceMore(c, d))  // claims that must find nothing
        #expect(claims.of(namespace).count == 2)
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
        #expect(await Self.claimTwiceMore(b))  // a's lease is gone: b's claims must find nothing of it
        #expect(!claims.all.contains { $0.namespace == namespace })
    }
}
