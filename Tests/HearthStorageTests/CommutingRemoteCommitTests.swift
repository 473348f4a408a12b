import Foundation
import HearthCore
import HearthStorage
import Synchronization
import Testing

/// A database following an engine that other servers write to, driven step by step: which remote
/// commits it takes in beneath its writes in flight (they commute), and which make it decide them again.
@Suite struct CommutingRemoteCommitTests {
    /// An engine that keeps what is appended and answers only when told; remote commits are delivered
    /// by the test, as a storage thread would between commits.
    final class ScriptedEngine: FollowingStorageEngine, @unchecked Sendable {
        typealias Completion = @Sendable (Result<Void, StorageError>) -> Void
        let location = "scripted"
        private let lock = NSLock()
        private var appendedBatches: [(batch: WriteBatch, completion: Completion)] = []
        private var receiver: (@Sendable (RemoteCommit) -> Bool)?

        func load(progress: ((LoadProgress) -> Void)?) throws(StorageError) -> Node { .empty }
        func append(_ batch: WriteBatch, completion: @escaping Completion) {
            lock.withLock { appendedBatches.append((batch, completion)) }
        }
        func replaceAll(with root: Node, progress: ((LoadProgress) -> Void)?) throws(StorageError) {}
        func compact() throws(StorageError) {}
        func backup(to path: String, progress: ((LoadProgress) -> Void)?) throws(StorageError) {}
        func close() {}
        func follow(_ receive: @escaping @Sendable (RemoteCommit) -> Bool) { lock.withLock { receiver = receive } }
        func catchUp() {}

        func catchUp(then completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) { completion(.success(())) }

        var batches: [WriteBatch] { lock.withLock { appendedBatches.map(\.batch) } }

        /// Hands another server's commit over; what the database answered (true: taken in beneath).
        func deliver(_ remote: WriteBatch) throws -> Bool {
            let receive = try #require(lock.withLock { self.receiver })
            return receive(.batches([remote]))
        }

        /// Answers the `index`th batch appended.
        func complete(_ index: Int, _ result: Result<Void, StorageError>) {
            let completion = lock.withLock { appendedBatches[index].completion }
            completion(result)
        }
    }

    /// Collects a write's answer.
    final class Answer: Sendable {
        let result = Mutex<Result<DurableDatabase.CommittedWrite, any Error>?>(nil)
        var completion: @Sendable (Result<DurableDatabase.CommittedWrite, any Error>) -> Void {
            { result in self.result.withLock { $0 = result } }
        }
        var succeeded: Bool { result.withLock { if case .success = $0 { true } else { false } } }
        var isPending: Bool { result.withLock { $0 == nil } }
    }

    func following() -> (ScriptedEngine, DurableDatabase) {
        let engine = ScriptedEngine()
        let database = DurableDatabase(engine: engine, root: .empty)
        #expect(database.follow { _ in })
        return (engine, database)
    }

    static let superseded = StorageError(.superseded, "another server committed first")

    @Test func aRemoteCommitBesideTheWritesInFlightIsTakenInBeneathThem() throws {
        let (engine, database) = following()
        let first = Answer()
        database.set("users/ada/age", to: Node(36), completion: first.completion)
        database.update("users/bob", with: [("name", Node("Bob"))], completion: Answer().completion)
        let decided = engine.batches
        #expect(try engine.deliver(WriteBatch(operations: [.put("users/cy/age", Node(7))])))
        // The remote commit is in the committed tree, and in what the next write is decided on.
        #expect(database.root.child(at: "users/cy/age") == Node(7))
        let seen = Mutex<Node?>(nil)
        database.set("users/dee/age", to: Node(1), check: { _, before, _ in
            seen.withLock { $0 = before.child(at: "users/cy/age") }
            return nil
        }, completion: Answer().completion)
        #expect(seen.withLock { $0 } == Node(7))
        // The writes in flight keep their batches: nothing was appended again.
        #expect(engine.batches.count == 3)
        #expect(Array(engine.batches.prefix(2)) == decided)
        engine.complete(0, .success(()))
        #expect(first.succeeded)
        #expect(database.root == Node(["users": Node(["ada": Node(["age": Node(36)]), "cy": Node(["age": Node(7)])])]))
    }

    @Test(arguments: [
        ("counters/a", "counters"),  // the remote commit replaced an ancestor of the write
        ("counters", "counters/a"),  // ... or something below it
        ("counters/a", "counters/a"),  // ... or the same location
    ])
    func aRemoteCommitOverlappingAWriteInFlightHasItDecidedAgain(write: String, remote: String) throws {
        let (engine, database) = following()
        let answer = Answer()
        database.set(Path(write), to: Node(1), completion: answer.completion)
        #expect(try !engine.deliver(WriteBatch(operations: [.put(Path(remote), Node(5))])))
        // Asked meanwhile: waits until the write in flight is back.
        let later = Answer()
        database.set("other", to: Node(true), completion: later.completion)
        #expect(engine.batches.count == 1)
        engine.complete(0, .failure(Self.superseded))
        // Both decided again on the tree with the remote commit, in the order they were asked.
        #expect(engine.batches.count == 3)
        #expect(engine.batches[1].operations.map(\.path).contains(Path(write)))
        #expect(engine.batches[2].operations == [.put("other", Node(true))])
        engine.complete(1, .success(()))
        engine.complete(2, .success(()))
        #expect(answer.succeeded && later.succeeded)
        #expect(database.root.child(at: Path(write)) == Node(1))
        #expect(database.root.child(at: "other") == Node(true))
    }

    /// An update of a node's `.priority` rewrites the node whole: it overlaps what is below the node.
    @Test func anUpdateOfAPriorityOverlapsTheNodesChildren() throws {
        let (engine, database) = following()
        database.set("a", to: try Node(json: #"{"x": 1}"#), completion: Answer().completion)
        engine.complete(0, .success(()))
        database.update("a", with: [(".priority", Node(5))], completion: Answer().completion)
        #expect(try !engine.deliver(WriteBatch(operations: [.removeSubtree("a/x"), .put("a/x", Node(9))])))
        engine.complete(1, .failure(Self.superseded))
        engine.complete(2, .success(()))
        #expect(database.root.child("a") == (try Node(json: #"{"x": 9, ".priority": 5}"#)))
    }

    /// Whether a prioritized node keeps its marker depends on the children it has left, which a write of
    /// one child does not name: a remote write of a sibling overlaps.
    @Test func aWriteBelowAPrioritizedNodeOverlapsItsOtherChildren() throws {
        let (engine, database) = following()
        database.set("a", to: try Node(json: #"{"x": 1, "y": 2, ".priority": 5}"#), completion: Answer().completion)
        engine.complete(0, .success(()))
        database.set("a/y", to: .empty, completion: Answer().completion)
        #expect(try !engine.deliver(WriteBatch(operations: [.removeSubtree("a/x")])))
        engine.complete(1, .failure(Self.superseded))
        // Decided again on the tree without x: removing y empties a, so its marker goes too.
        #expect(engine.batches[2].operations.contains(.removeRecord("a")))
        engine.complete(2, .success(()))
        #expect(database.root.child("a").isEmpty)
    }

    @Test func anIncrementOverlappingARemoteCommitCountsItsValue() throws {
        let (engine, database) = following()
        database.set("likes", to: Node(1), completion: Answer().completion)
        engine.complete(0, .success(()))
        let increment = try Node(json: #"{".sv": {"increment": 1}}"#)
        database.set("likes", to: increment, now: 1_700_000_000_000, completion: Answer().completion)
        #expect(try !engine.deliver(WriteBatch(operations: [.removeSubtree("likes"), .put("likes", Node(10))])))
        engine.complete(1, .failure(Self.superseded))
        engine.complete(2, .success(()))
        #expect(database.root.child(at: "likes") == Node(11))
    }

    @Test func aWriteCheckedByRulesIsAlwaysDecidedAgain() throws {
        let (engine, database) = following()
        let answer = Answer()
        // Security rules may read anywhere (here: a flag elsewhere in the tree).
        database.set("posts/p1", to: Node("hi"), check: { _, before, _ in
            before.child(at: "config/closed") == Node(true) ? StorageError(.closed, "closed") : nil
        }, completion: answer.completion)
        #expect(try !engine.deliver(WriteBatch(operations: [.put("config/closed", Node(true))])))
        engine.complete(0, .failure(Self.superseded))
        // Decided again on the tree with the flag: refused, nothing appended.
        #expect(engine.batches.count == 1)
        #expect(!answer.isPending && !answer.succeeded)
        #expect(database.root.child(at: "posts/p1").isEmpty)
    }

    /// A client that lost the answer to a write sends it again, perhaps to another server of the cluster
    /// (HearthClient's write IDs, docs/protocol.md §2.6.1): one that another server applied already is
    /// acknowledged once the commit that applied it is in the tree, and not applied again.
    @Test func aWriteAnotherServerAppliedIsAcknowledgedNotAppliedAgain() throws {
        let (engine, database) = following()
        let increment = try Node(json: #"{".sv": {"increment": 1}}"#)
        var applied = WriteBatch(operations: [.put("count", Node(1))])
        applied.writeID = "w-1"
        #expect(try engine.deliver(applied))
        let resent = Answer()
        database.set("count", to: increment, now: 1, writeID: "w-1", completion: resent.completion)
        // Nothing to store: only the barrier that answers it after what came before.
        #expect(engine.batches.allSatisfy { $0.operations.isEmpty })
        engine.complete(0, .success(()))
        #expect(resent.succeeded)
        // Checked by rules (decided outside the lock) too; another ID is applied.
        let checked = Answer()
        database.set("count", to: increment, now: 1, check: { _, _, _ in nil }, writeID: "w-1", completion: checked.completion)
        engine.complete(1, .success(()))
        #expect(checked.succeeded)
        database.set("count", to: increment, now: 1, writeID: "w-2", completion: Answer().completion)
        engine.complete(2, .success(()))
        #expect(database.root.child(at: "count") == Node(2))
    }

    /// The resend was in flight here when the commit of the first send arrived: even where they would
    /// commute (the first changed nothing), the resend is superseded, decided again and found applied.
    @Test func aResendInFlightWhenTheFirstSendArrivesIsNotCommittedAfterIt() throws {
        let (engine, database) = following()
        let resent = Answer()
        database.update("flags", with: [("on", Node(true))], writeID: "w-1", completion: resent.completion)
        var first = WriteBatch(operations: [])
        first.writeID = "w-1"
        #expect(try !engine.deliver(first))
        #expect(resent.isPending)
        engine.complete(0, .failure(Self.superseded))
        // Decided again once the commit is in the tree: acknowledged, nothing appended again.
        #expect(resent.succeeded)
        #expect(engine.batches.count == 1)
        #expect(database.root.child(at: "flags").isEmpty)
    }

    @Test func writtenLocationsOverlapAtAboveAndBelow() {
        let written = WrittenLocations(["a/b/c", "x"])
        for overlapping: Path in ["", "a", "a/b", "a/b/c", "a/b/c/d", "x", "x/y/z"] {
            #expect(written.overlaps(overlapping), "\(overlapping)")
        }
        for apart: Path in ["a/c", "a/b/d", "b", "xy", "a/bc"] {
            #expect(!written.overlaps(apart), "\(apart)")
        }
        #expect(WrittenLocations([]).isEmpty && !WrittenLocations([]).overlaps(""))
    }
}
