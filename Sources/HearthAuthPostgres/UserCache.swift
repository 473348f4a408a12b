import HearthAuth
import HearthPostgres
import Synchronization

/// Decoded accounts by uid, for the reads that happen on every token check and refresh
/// (`AccountStore.user(id:)`, which the database server also calls on its event loop). Kept true by
/// PostgreSQL's notifications: the users table's trigger names every changed or deleted account, and the
/// store drops it here, as it does right after its own writes.
///
/// The cache is trusted only while its listener listens: before the first `.listening` and after an
/// `.interrupted` it holds nothing and takes nothing, since notifications may be missed meanwhile.
/// A read that raced with a change must not put back what the change replaced, so a read is a
/// ``Read``: begun before the query, finished after it, and its result kept only if its account was not
/// dropped (and the cache not reset) in between.
final class UserCache: Sendable {
    private struct State {
        var entries: [String: UserRecord] = [:]
        /// Accounts being read: how many reads, and how often the account was dropped meanwhile.
        var reading: [String: (readers: Int, drops: UInt64)] = [:]
        /// Moves on at every reset, which every read in flight then misses.
        var epoch: UInt64 = 0
        var trusted = false
    }

    /// A read of one account from PostgreSQL, begun by ``lookup(_:)``.
    struct Read {
        let uid: String
        let drops: UInt64
        let epoch: UInt64
    }

    private let state = Mutex(State())
    /// Beyond this many accounts the cache starts over (as SQLite's store does): a bound, not an LRU.
    static let capacity = 10_000

    /// The cached account, or the read to ``finish(_:with:)`` once PostgreSQL answered (nil while the cache
    /// is not trusted: nothing is kept).
    func lookup(_ uid: String) -> (user: UserRecord?, read: Read?) {
        state.withLock { state in
            guard state.trusted else { return (nil, nil) }
            if let user = state.entries[uid] { return (user, nil) }
            let reading = state.reading[uid] ?? (0, 0)
            state.reading[uid] = (reading.readers + 1, reading.drops)
            return (nil, Read(uid: uid, drops: reading.drops, epoch: state.epoch))
        }
    }

    /// Ends `read` (also when it failed: `user` nil), keeping what it found unless it may be stale.
    func finish(_ read: Read, with user: UserRecord?) {
        state.withLock { state in
            let reading = state.reading[read.uid] ?? (1, read.drops)
            state.reading[read.uid] = reading.readers > 1 ? (reading.readers - 1, reading.drops) : nil
            guard let user, state.trusted, state.epoch == read.epoch, reading.drops == read.drops else { return }
            if state.entries.count >= Self.capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[read.uid] = user
        }
    }

    /// Forgets `uid`'s account (it changed, or may have).
    func drop(_ uid: String) {
        state.withLock { state in
            state.entries[uid] = nil
            if let reading = state.reading[uid] { state.reading[uid] = (reading.readers, reading.drops &+ 1) }
        }
    }

    /// Whether the listener listens, so that reads are kept.
    var isTrusted: Bool { state.withLock { $0.trusted } }

    /// Forgets every account.
    func dropAll() { reset(trusted: nil) }

    /// What the listener heard.
    func handle(_ event: PostgresNotification) {
        switch event {
        case .listening: reset(trusted: true)
        case .interrupted: reset(trusted: false)
        case .payload(let uid): drop(uid)
        }
    }

    private func reset(trusted: Bool?) {
        state.withLock { state in
            state.epoch &+= 1
            state.entries.removeAll()
            if let trusted { state.trusted = trusted }
        }
    }
}
