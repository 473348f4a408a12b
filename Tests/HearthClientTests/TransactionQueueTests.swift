import HearthCore
import Testing
@testable import HearthClient

/// Which transactions run, wait, retry and end, decided without a server.
@Suite struct TransactionQueueTests {
    @Test func overlappingTransactionsRunOneAfterAnotherInOrder() {
        var queue = TransactionQueue()
        #expect(queue.add(1, at: Path("counter")) == [.run(1)])
        // Below it, and at it: both wait; elsewhere: runs at once.
        #expect(queue.add(2, at: Path("counter")).isEmpty)
        #expect(queue.add(3, at: Path("counter/x")).isEmpty)
        #expect(queue.add(4, at: Path("other")) == [.run(4)])
        #expect(queue.waiting == [2, 3])
        queue.sent(1)
        queue.sent(4)
        // The first commits: the second runs on the value it left; the third still waits behind it.
        #expect(queue.answered(1, status: "ok") == [.committed(1), .run(2)])
        queue.sent(2)
        #expect(queue.answered(2, status: "ok") == [.committed(2), .run(3)])
        // A block that aborts ends its transaction and lets the next run.
        #expect(queue.add(5, at: Path("counter")).isEmpty)
        #expect(queue.ended(3) == [.run(5)])
    }

    @Test func staleAndDisconnectedRunsRetryUpToTheLimit() {
        var queue = TransactionQueue()
        _ = queue.add(1, at: Path("n"))
        for run in 1..<TransactionQueue.retriesMax {
            queue.sent(1)
            #expect(queue.answered(1, status: run.isMultiple(of: 2) ? "disconnect" : "datastale") == [.run(1)])
        }
        queue.sent(1)
        #expect(queue.answered(1, status: "datastale") == [.failed(1, status: "maxretry", acknowledged: false)])
        #expect(queue.entries.isEmpty)
        // A refusal ends it at once, with the server's status.
        _ = queue.add(2, at: Path("n"))
        queue.sent(2)
        #expect(queue.answered(2, status: "permission_denied") == [.failed(2, status: "permission_denied", acknowledged: false)])
    }

    @Test func aSetOverATransactionAbortsIt() {
        var queue = TransactionQueue()
        _ = queue.add(1, at: Path("a/b"))
        _ = queue.add(2, at: Path("a/b"))
        _ = queue.add(3, at: Path("z"))
        queue.sent(1)
        // The one in flight ends on its answer (whatever it is); the waiting one ends now.
        #expect(queue.set(at: Path("a")) == [.failed(2, status: "set", acknowledged: false)])
        #expect(queue.answered(1, status: "ok") == [.failed(1, status: "set", acknowledged: true)])
        #expect(queue.entries.map(\.id) == [3])
        #expect(queue.cancelAll(status: "write_canceled") == [.failed(3, status: "write_canceled", acknowledged: false)])
    }
}
