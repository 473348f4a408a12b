import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// Wakes a thread waiting in `poll` on a connection (a listener's, for notifications) when its owner
/// stops it: a pipe whose read end is polled beside the connection's socket, so stopping takes no
/// longer than the wake-up, not a whole wait.
final class WakeSignal: Sendable {
    /// The pipe's read end, polled for readability.
    let descriptor: Int32
    private let writeEnd: Int32
    private let signalled = Atomic<Bool>(false)

    init() {
        var ends: [Int32] = [-1, -1]
        // A process out of descriptors cannot be stopped early; its waits still end by their deadlines.
        if pipe(&ends) == 0 {
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        } else {
            ends = [-1, -1]
        }
        descriptor = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    var isSignalled: Bool { signalled.load(ordering: .acquiring) }

    /// Wakes the waiter, now and for every wait after.
    func signal() {
        guard !signalled.exchange(true, ordering: .acquiringAndReleasing), writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }
}
