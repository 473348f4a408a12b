internal import CLibWebSockets
import Foundation
public import HearthProtocol
import HearthSupport

/// The loop's inbox: work handed over from other threads, run in one pass per wake-up.
public final class Inbox: LoopExecutor, @unchecked Sendable {
    // Protected by `lock`.
    private let lock = NSCondition()
    private var work: [@Sendable () -> Void] = []
    private var stopping = false
    private var stopped = false
    /// The loop's `uv_async_t`; set once before any other thread can call `execute`.
    private var wakeup: UnsafeMutablePointer<uv_async_t>?

    /// The loop's thread: the one that attached the wake-up.
    private var loopThread: ThreadIdentity?

    /// Called on the loop thread, before any handler runs (nil: no wake-up to send, for tests).
    func attach(_ wakeup: UnsafeMutablePointer<uv_async_t>?) {
        lock.lock()
        self.wakeup = wakeup
        loopThread = .current
        lock.unlock()
    }

    public var isOnLoop: Bool {
        lock.lock()
        defer { lock.unlock() }
        return loopThread == .current
    }

    public func execute(_ item: @escaping @Sendable () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        work.append(item)
        // uv_async_send is the one libuv call safe from any thread; calls coalesce into one wake-up.
        if work.count == 1, let wakeup { uv_async_send(wakeup) }
        if work.count == 1 { lock.signal() }
    }

    /// Waits (on the loop thread, which is then not polling) until there is work or `deadline` passes;
    /// true when there is work to take.
    func waitForWork(until deadline: Date) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        while work.isEmpty && !stopping {
            if !lock.wait(until: deadline) { break }
        }
        return !work.isEmpty || stopping
    }

    func stop() {
        lock.lock()
        defer { lock.unlock() }
        stopping = true
        if let wakeup { uv_async_send(wakeup) }
        lock.signal()  // a fan-out hold waiting for work ends now
    }

    func take() -> ([@Sendable () -> Void], Bool) {
        lock.lock()
        defer { lock.unlock() }
        let taken = work
        work = []
        if stopping { stopped = true }
        return (taken, stopping)
    }
}
