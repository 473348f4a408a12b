import Foundation
import HearthCore
import HearthStorage
import Synchronization
import Testing

/// A catch-up that a read waits for says whether it read what other servers committed: a read must not be
/// answered from a tree that may lack their acknowledged writes (docs/reliability.md).
struct CheckedCatchUpTests {
    /// A committer whose catch-ups deliver one remote commit, or fail, as the test says.
    final class Scripted: GroupCommitter, @unchecked Sendable {
        let fails = Mutex(false)
        func commit(_ batches: [WriteBatch]) -> Result<Void, StorageError> { .success(()) }
        func finish() {}
        func catchUp() -> Result<RemoteCommit?, StorageError> {
            fails.withLock { $0 } ? .failure(StorageError(.io, "PostgreSQL is unreachable")) : .success(.snapshot(Node(1)))
        }
    }

    private func caughtUp(_ thread: GroupCommitThread<Scripted>) async -> Result<Void, StorageError> {
        await withCheckedContinuation { continuation in thread.catchUp { continuation.resume(returning: $0) } }
    }

    @Test func aWaitingReadHearsWhetherTheCatchUpReadTheLogAfterItsCommitsWereDelivered() async {
        let committer = Scripted()
        let thread = GroupCommitThread(committer: committer, location: "scripted")
        // Not following: nothing to catch up with.
        #expect((try? await caughtUp(thread).get()) != nil)
        let delivered = Mutex(0)
        thread.follow { _ in
            delivered.withLock { $0 += 1 }
            return true
        }
        let before = delivered.withLock { $0 }
        #expect((try? await caughtUp(thread).get()) != nil)
        #expect(delivered.withLock { $0 } > before, "the commits the catch-up found came first")
        committer.fails.withLock { $0 = true }
        if case .failure(let error) = await caughtUp(thread) {
            #expect(error.message.contains("unreachable"))
        } else {
            Issue.record("a failed catch-up was reported as caught up")
        }
        thread.close()
        if case .success = await caughtUp(thread) { Issue.record("a closed engine reported caught up") }
    }
}
