import Dispatch
import HearthCore
import Synchronization
import Testing

@testable import HearthStorage

/// Writes with a check (the security rules) are decided outside the database's lock, on a copy of the
/// pending tree, and decided again under it when that tree changed meanwhile. (A refusal on the copy
/// stands: the write is refused as of the moment it was decided, before the other change.)
struct CheckedWriteTests {
    @Test func theCheckRunsWithoutTheDatabasesLock() async throws {
        let database = DurableDatabase(engine: InMemoryStorageEngine(), root: .empty)
        let readerGotIn = Mutex<Bool?>(nil)
        let check: DurableDatabase.WriteCheck = { _, _, _ in
            // Another thread reads the database (which takes its lock) while the check runs.
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                _ = database.root
                done.signal()
            }
            readerGotIn.withLock { $0 = done.wait(timeout: .now() + 5) == .success }
            return nil
        }
        let written = try await withCheckedThrowingContinuation { continuation in
            database.set(Path("a"), to: Node(1), check: check) { continuation.resume(with: $0) }
        }
        #expect(written.root.child(at: Path("a")) == Node(1))
        #expect(readerGotIn.withLock { $0 } == true, "a reader waited for the check: it ran under the lock")
    }

    @Test func aWriteDecidedOnATreeThatChangedMeanwhileIsDecidedAgain() async throws {
        let database = DurableDatabase(engine: InMemoryStorageEngine(), root: .empty)
        let seen = Mutex<[Node]>([])
        let check: DurableDatabase.WriteCheck = { _, before, _ in
            let call = seen.withLock { seen in
                seen.append(before.child(at: Path("other")))
                return seen.count
            }
            // The first time, another write changes the pending tree while this one is being decided.
            if call == 1 { database.set(Path("other"), to: Node("x")) { _ in } }
            return nil
        }
        let written = try await withCheckedThrowingContinuation { continuation in
            database.set(Path("a"), to: Node(1), check: check) { continuation.resume(with: $0) }
        }
        // Allowed on the first tree, but that tree is gone: decided again on the one with the other write.
        #expect(seen.withLock { $0 } == [.empty, Node("x")])
        #expect(written.root.child(at: Path("a")) == Node(1))
        await database.waitForPendingWrites()
        #expect(database.root.child(at: Path("other")) == Node("x"))
    }
}
