import HearthCore
import Testing

@testable import HearthStorage

/// The durable database's decisions about its writes, without trees or an engine: when new writes are
/// refused or wait, what the writes in flight commute with, and when waiting writes are decided again.
/// (`#expect` cannot call a mutating method, hence the named answers.)
struct WriteQueueTests {
    typealias Queue = WriteQueue<String>

    /// A queue with `names` decided and in flight, each read at its own location (`a`, `b`, …).
    private func inFlight(_ names: [String]) -> Queue {
        var queue = Queue()
        for name in names {
            let admission = queue.admit(name)
            #expect(admission == .decide)
            queue.appended(decidedOn: [Path(name)])
        }
        return queue
    }

    @Test func writesAreDecidedAtOnceWhileNothingFailed() {
        var queue = inFlight(["a", "b"])
        #expect(queue.inFlight == 2 && queue.decidesNow)
        queue.finished("a", .durable)
        queue.finished("b", .durable)
        let toDecideAgain = queue.settle()
        #expect(queue.inFlight == 0)
        #expect(toDecideAgain == nil, "nothing to rebuild after durable writes")
    }

    @Test func afterAFailureNewWritesAreRefusedUntilTheWritesInFlightDrained() {
        var queue = inFlight(["a", "b"])
        queue.stop(.failed)  // the engine's thread, before the completion is finished
        let whileFailing = queue.admit("c")
        #expect(whileFailing == .refuse)
        queue.finished("a", .failed)
        let beforeDrained = queue.settle()
        #expect(beforeDrained == nil, "b is still in flight, built on a")
        queue.finished("b", .failed)
        let drained = queue.settle()
        #expect(drained == [], "nothing waits after a failure: the refused writers were told")
        let afterwards = queue.admit("e")
        #expect(afterwards == .decide)
    }

    @Test func supersededAndQueuedWritesAreDecidedAgainOldestFirstOnceDrained() {
        var queue = inFlight(["a", "b"])
        let commutes = queue.remoteArrived(writing: [Path("a")])
        #expect(!commutes, "it overlaps what a was decided on")
        let whileBehind = queue.admit("c")
        #expect(whileBehind == .wait)
        queue.finished("a", .superseded)
        queue.finished("b", .superseded)
        let beforeApplied = queue.settle()
        #expect(beforeApplied == nil, "the remote commit is not in the committed tree yet")
        _ = queue.admit("d")
        queue.remoteApplied()
        let toDecideAgain = queue.settle()
        #expect(toDecideAgain == ["a", "b", "c", "d"])
        let afterwards = queue.settle()
        #expect(queue.decidesNow && afterwards == nil)
    }

    @Test func aRemoteCommitElsewhereCommutesWithTheWritesInFlight() {
        var queue = inFlight(["users/ada", "users/bob"])
        let commutes = queue.remoteArrived(writing: [Path("users/cy"), Path("posts/1")])
        #expect(commutes && queue.decidesNow && queue.remoteUnapplied == 1)
        let next = queue.admit("next")
        #expect(next == .decide)
        queue.remoteApplied()
        let toDecideAgain = queue.settle()
        #expect(toDecideAgain == nil, "nothing was stale")
    }

    @Test func aRemoteCommitAboveOrBelowAReadDoesNotCommute() {
        var above = inFlight(["users/ada"])
        let aboveCommutes = above.remoteArrived(writing: [Path("users")])
        var below = inFlight(["users"])
        let belowCommutes = below.remoteArrived(writing: [Path("users/ada/name")])
        #expect(!aboveCommutes && !belowCommutes)
    }

    @Test func aWriteCheckedByRulesCommutesWithNothingAndASnapshotOnlyWithNothingInFlight() {
        var checked = Queue()
        _ = checked.admit("ruled")
        checked.appended(decidedOn: nil)  // the rules may have read anywhere
        let elsewhere = checked.remoteArrived(writing: [Path("elsewhere")])
        #expect(!elsewhere)

        var idle = Queue()
        let snapshotWhileIdle = idle.remoteArrived(writing: nil)
        var busy = inFlight(["a"])
        let snapshotWhileBusy = busy.remoteArrived(writing: nil)
        #expect(snapshotWhileIdle && !snapshotWhileBusy)
    }

    @Test func onlyTheWritesStillInFlightCountForCommuting() {
        var queue = inFlight(["a", "b"])
        queue.finished("a", .durable)
        let overA = queue.remoteArrived(writing: [Path("a")])
        #expect(overA, "a is durable: only b is in flight")
        queue.remoteApplied()
        // Many batches finish (in the order they were appended): the record of reads is trimmed, and
        // still answers for the one left in flight.
        for index in 0..<3000 {
            _ = queue.admit("w\(index)")
            queue.appended(decidedOn: [Path("w\(index)")])
        }
        queue.finished("b", .durable)
        for index in 0..<2999 { queue.finished("w\(index)", .durable) }
        let overB = queue.remoteArrived(writing: [Path("b")])
        queue.remoteApplied()
        let overLast = queue.remoteArrived(writing: [Path("w2999")])
        #expect(queue.inFlight == 1 && overB && !overLast)
    }
}
