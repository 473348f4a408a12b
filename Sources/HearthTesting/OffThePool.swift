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
