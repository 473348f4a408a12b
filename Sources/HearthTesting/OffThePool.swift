import Foundation

/// Runs blocking work on a thread of its own and suspends until it is done.
///
/// Swift Testing runs every test on the cooperative pool, which has one thread per core: two on CI.
/// A test that blocks for seconds (a storage load, initdb, a SIGKILL loop) holds one of those threads
/// the whole time, and two such tests at once stall every asynchronous test in the process, whose
/// waits then time out for no fault of their own. Tests whose work blocks for longer than a moment
/// run it here instead.
///
///     @Test func aLargeLoad() async throws {
///         try await offThePool { try loadAMillionLeaves() }
///     }
public func offThePool<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Swift.Result { try work() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// ``offThePool(_:)`` for work that cannot throw.
public func offThePool<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// Runs `body` in the calling task, but on threads outside the cooperative pool: for a test body that
/// blocks step after step (a database round trip per call) and checks as it goes. Unlike
/// ``offThePool(_:)``'s bare thread, the body stays in the test's task, so `#expect` and `#require`
/// report to the test that made them.
///
///     @Test func aLifecycle() async throws {
///         try await onBlockingThreads {
///             let store = try openStore()                 // blocks
///             #expect(try store.user(id: "ann") != nil)   // blocks, and reports to this test
///         }
///     }
public func onBlockingThreads<Result>(_ body: () async throws -> Result) async rethrows -> Result {
    try await withTaskExecutorPreference(BlockingThreads.shared) {
        // The preference moves the task only when it is next enqueued (the operation starts where it was
        // called, and a hop to a nonisolated function from the cooperative pool stays there): a yield
        // enqueues it on its preferred executor now, before the body's first stretch blocks.
        await Task.yield()
        return try await body()
    }
}

/// Each job of the tasks that prefer it runs on a thread of its own, as ``offThePool(_:)``'s work does. Not
/// a concurrent DispatchQueue: on Linux one targets the same non-overcommitting root queue whose threads
/// (one per core) the cooperative pool runs on, so blocking there would starve it all the same. A job is
/// the body's stretch between two suspensions, so a test body costs a thread or a few.
private final class BlockingThreads: TaskExecutor {
    static let shared = BlockingThreads()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { job.runSynchronously(on: executor) }
        thread.name = "hearth.blocking"
        thread.stackSize = 8 << 20
        thread.start()
    }
}
