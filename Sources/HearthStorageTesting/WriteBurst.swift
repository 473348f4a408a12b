import Dispatch
public import HearthCore
public import HearthStorage

/// Writes taken all at once, each with a change-feed note, before any is waited for: the storage thread
/// takes whatever is queued when it turns to the next commit, so they go in few large commits (and in one
/// when the engine is held up meanwhile). For tests of what large commits do to the feed.
public struct WriteBurst: Sendable {
    private let group: DispatchGroup

    /// Sets `path(n)` to `value(n)` for each n below `count`.
    public init(_ database: DurableDatabase, count: Int, path: (Int) -> Path, value: (Int) -> Node) {
        group = DispatchGroup()
        for n in 0..<count {
            let location = path(n), written = value(n)
            group.enter()
            let note = ChangeFeedNote(time: 1_000, path: location, data: .set(written), authType: .admin, channel: "rest")
            database.set(location, to: written, feed: note) { [group] _ in group.leave() }
        }
    }

    /// Returns once every write of the burst is durable or failed.
    public func finished() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in group.notify(queue: .global()) { done.resume() } }
    }
}
