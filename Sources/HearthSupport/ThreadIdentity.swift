#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which thread this is, comparable across threads: so that an owner stopping a thread of its own
/// from that very thread (a callback it runs) does not wait for itself.
public struct ThreadIdentity: Equatable, @unchecked Sendable {
    // pthread_t is an integer on Linux and a pointer on Darwin; it is only compared, never dereferenced.
    private let thread: pthread_t

    /// The calling thread.
    public static var current: ThreadIdentity { ThreadIdentity(thread: pthread_self()) }

    public static func == (a: ThreadIdentity, b: ThreadIdentity) -> Bool { pthread_equal(a.thread, b.thread) != 0 }
}
