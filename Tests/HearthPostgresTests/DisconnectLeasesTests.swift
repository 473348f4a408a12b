import Foundation
import HearthCore
import HearthStorage
@testable import HearthPostgres
import HearthTesting
import Synchronization
import Testing

/// Cluster leases: a dead node's onDisconnect operations go to exactly one other node, a node that
/// stops cleanly leaves only what it did not run, a node whose lease ran out runs nothing another node
/// claimed, and a forgotten session's are never run.
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

    /// `leases.take(session:)`, awaited.
    static func take(_ leases: PostgresDisconnectLeases, _ session: String) async -> LedgerEntry? {
        await withCheckedContinuation { continuation in leases.take(session) { continuation.resume(returning: $0) } }
    }

    @Test func aNodeThatStopsCleanlyLeavesWhatItDidNotRunToAnother() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("clean")
        let claims = Claims()
        let a = try Self.node(postgres.url, "a", claims: claims)
        let aName = a.node
        a.record(session: "1", namespace: namespace, operations: #"[{"p":"/y","v":2,"admin":true}]"#)
        a.record(session: "2", namespace: namespace, operations: #"[{"p":"/z","v":3,"admin":true}]"#)
        // Session 2's connection closed and its operations ran on a: taken, and carried out by their write.
        let taken = try #require(await Self.take(a, "2"))
        #expect(taken == LedgerEntry(owner: aName, key: "running 2"))
        // A take whose answer was lost with its connection, asked again, takes the same row.
        #expect(await Self.take(a, "2") == taken)
        let engine = try PostgresStorageEngine(url: postgres.url, namespace: namespace)
        var batch = WriteBatch(operations: [.put("z", Node(3))])
        batch.carriesOut = [taken]
        try await engine.append(batch)
        engine.close()
        await offThePool { a.stop() }
        // Session 1's never ran (the server stopped first): the next node takes them, and only them.
        let b = try Self.node(postgres.url, "b", claims: claims)
        defer { b.stop() }
        #expect(await eventually { claims.of(namespace).count == 1 })
        #expect(claims.of(namespace).first?.claim.key == "claimed \(aName) 1")
        #expect(await Self.claimTwiceMore(b))
        #expect(claims.of(namespace).count == 1)
    }

    @Test func aTakeWhileTheLeaseHasLapsedUnclaimedWaitsForTheRenewalAndThenTakes() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("lapsed")
        let a = try PostgresDisconnectLeases(url: postgres.url, node: "a", lease: .seconds(1), log: .silent)
        a.start(orphans: { _, _, _ in })
        defer { a.stop() }
        let aName = a.node
        a.record(session: "1", namespace: namespace, operations: #"[{"p":"/x","v":1,"admin":true}]"#)
        #expect(await eventually { (try? Self.rows(postgres.url, node: aName)) == 1 })
        // The lease looks run out (a node that was slow to renew), and no other node claimed the row: the
        // take is neither refused (the operations would never run) nor granted before the renewal.
        _ = try query(postgres.url, "UPDATE hearth_nodes SET expires_at = now() - interval '1 second' WHERE node = $1", [.text(aName)])
        #expect(await Self.take(a, "1") == LedgerEntry(owner: aName, key: "running 1"))
        #expect(a.node == aName)
    }

    @Test func aWriteWhoseTakenRecordAnotherNodeClaimedMeanwhileStoresNothing() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("fenced")
        let claims = Claims()
        let a = try PostgresDisconnectLeases(url: postgres.url, node: "a", lease: .seconds(1), log: .silent)
        a.start(orphans: { _, _, _ in })
        let aName = a.node
        a.record(session: "1", namespace: namespace, operations: #"[{"p":"/presence/ada","v":false,"admin":false}]"#)
        let taken = try #require(await Self.take(a, "1"))
        // a stops renewing before its write commits (frozen, cut off): b claims the taken record.
        a.crashForTesting()
        _ = try query(postgres.url, "UPDATE hearth_nodes SET expires_at = now() - interval '1 second' WHERE node = $1", [.text(aName)])
        let b = try Self.node(postgres.url, "b", claims: claims)
        defer { b.stop() }
        #expect(await eventually { claims.of(namespace).count == 1 })
        // a's write arrives afterwards: refused whole, so the operations run once (b's).
        let engine = try PostgresStorageEngine(url: postgres.url, namespace: namespace)
        defer { engine.close() }
        var batch = WriteBatch(operations: [.put("presence/ada", Node(false))])
        batch.carriesOut = [taken]
        let failure = await #expect(throws: StorageError.self) { try await engine.append(batch) }
        #expect(failure?.code == .unavailable && failure?.message.contains("another node took") == true)
        #expect(try query(postgres.url, "SELECT count(*) FROM hearth_records WHERE namespace = $1", [.text(namespace)]).first?.int64(0) == 0)
    }

    @Test func aNodeWhoseLeaseRanOutCannotRunWhatAnotherClaimedAndServesOnUnderANewName() async throws {
        let postgres = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("lost")
        let claims = Claims()
        let lost = Mutex(0)
        let a = try PostgresDisconnectLeases(url: postgres.url, node: "a", lease: .seconds(1), log: .silent)
        a.start(orphans: { _, _, _ in }, leaseLost: { lost.withLock { $0 += 1 } })
        let aName = a.node
        a.record(session: "1", namespace: namespace, operations: #"[{"p":"/presence/ada","v":false,"admin":false}]"#)
        #expect(await eventually { (try? Self.rows(postgres.url, node: aName)) == 1 })
        // a paused past its lease, as another node sees it: b claims a's connection.
        _ = try query(postgres.url, "UPDATE hearth_nodes SET expires_at = now() - interval '1 second' WHERE node = $1", [.text(aName)])
        let b = try Self.node(postgres.url, "b", claims: claims)
        defer { b.stop() }
        #expect(await eventually { claims.of(namespace).count == 1 })
        // a wakes: its next renewal finds its lease gone, it says so and takes a new name; the connection's
        // operations are not a's to run any more.
        #expect(await eventually { lost.withLock { $0 } == 1 })
        #expect(a.node != aName && a.node.hasPrefix("a-"))
        #expect(await Self.take(a, "1") == nil)
        // Under the new name it records and runs as before.
        a.record(session: "3", namespace: namespace, operations: #"[{"p":"/x","v":1,"admin":true}]"#)
        #expect(await Self.take(a, "3") == LedgerEntry(owner: a.node, key: "running 3"))
        await offThePool { a.stop() }
    }

}
