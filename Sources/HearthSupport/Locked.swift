import Foundation

/// A value behind a lock, for state that several threads share. The portable stand-in for the standard
/// library's `Mutex`, which needs iOS 18 and macOS 15: HearthClient, and what it links, must run on
/// iOS 15 and macOS 10.15 (docs/swift-sdk.md), so they use this instead.
///
///     let count = Locked(0)
///     count.withLock { $0 += 1 }
public final class Locked<Value>: @unchecked Sendable {  // `value` is only touched under `lock`
    private var value: Value
    private let lock = NSLock()

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, holding the lock. `body` must not take this lock again.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
