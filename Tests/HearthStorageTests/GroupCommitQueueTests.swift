import HearthCore
import Testing

@testable import HearthStorage

/// The group-commit thread's decisions, without a thread: which jobs go into a turn, and which batches
/// fail instead of committing after a failed commit or another server's.
struct GroupCommitQueueTests {
    typealias Queue = GroupCommitQueue<String, String>

    private func batch() -> WriteBatch { WriteBatch(operations: [.put(Path("a"), Node(1))]) }

    @Test func aTurnTakesBatchesInOrderUpToTheBoundAndAnExclusiveJobAlone() {
        var queue = Queue()
        var accepted: [Bool] = []
        for name in ["b1", "b2", "b3"] { accepted.append(queue.append(batch(), name)) }
        accepted.append(queue.append(exclusive: "import"))
        accepted.append(queue.append(batch(), "b4"))
        #expect(accepted == [true, true, true, true, true])
        #expect(queue.count == 5 && queue.appended == 4)

        let first = queue.take(max: 2)
        #expect(first.group.map(\.completion) == ["b1", "b2"] && first.exclusive == nil)
        let second = queue.take(max: 8)
        #expect(second.group.map(\.completion) == ["b3"], "an exclusive job is not taken behind batches")
        let third = queue.take(max: 8)
        #expect(third.group.isEmpty && third.exclusive == "import")
        let fourth = queue.take(max: 8)
        #expect(fourth.group.map(\.sequence) == [4])
        #expect(queue.isEmpty)
    }

    @Test func afterAFailedCommitWhatWasAppendedFailsAndLaterBatchesCommit() {
        var queue = Queue()
        for name in ["b1", "b2", "b3"] { _ = queue.append(batch(), name) }
        let group = queue.take(max: 8).group
        queue.abortAppended()  // a commit failed while these were queued
        _ = queue.append(batch(), "b4")
        let split = queue.split(group)
        #expect(split.aborted.map(\.completion) == ["b1", "b2", "b3"])
        #expect(split.superseded.isEmpty && split.toCommit.isEmpty)
        let next = queue.split(queue.take(max: 8).group)
        #expect(next.aborted.isEmpty && next.toCommit.map(\.completion) == ["b4"])
    }

    @Test func anotherServersCommitSupersedesWhatWasAppendedBeforeTheDatabaseHeard() {
        var queue = Queue()
        _ = queue.append(batch(), "b1")
        _ = queue.append(batch(), "b2")
        queue.abortAppended()
        _ = queue.append(batch(), "b3")
        queue.supersedeAppended()
        _ = queue.append(batch(), "b4")
        let split = queue.split(queue.take(max: 8).group)
        #expect(split.aborted.map(\.completion) == ["b1", "b2"])
        #expect(split.superseded.map(\.completion) == ["b3"])
        #expect(split.toCommit.map(\.completion) == ["b4"])
    }

    @Test func closingRefusesNewWorkAndKeepsWhatIsQueued() {
        var queue = Queue()
        _ = queue.append(batch(), "b1")
        let first = queue.close(), second = queue.close()
        #expect(first && !second, "a second close is not the first")
        let late = queue.append(batch(), "late"), lateJob = queue.append(exclusive: "late")
        #expect(!late && !lateJob)
        let turn = queue.take(max: 8)
        #expect(turn.group.map(\.completion) == ["b1"])
        #expect(queue.appended == 1)
    }
}
