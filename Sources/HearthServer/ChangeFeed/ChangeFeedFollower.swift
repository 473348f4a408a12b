/// A reader that follows a namespace's change feed as it grows, as a value: where it is, and when to
/// read the next page. Storage reads are asynchronous, so at most one is in flight; a commit that
/// arrives meanwhile makes the reader read again once the page is in, so no commit goes unread and no
/// commit costs a read of its own while reads keep up.
///
///     var follower = ChangeFeedFollower(after: 0, pageSize: 1000)
///     if let position = follower.start() { read(after: position) }
///     // each commit:      if let position = follower.committed() { read(after: position) }
///     // each page read:   if let position = follower.received(page) { read(after: position) }
struct ChangeFeedFollower: Equatable {
    /// The last position delivered.
    private(set) var position: Int64
    let pageSize: Int
    private var reading = false
    /// A commit arrived while a read was in flight: that read may not have seen it.
    private var committedWhileReading = false

    init(after position: Int64, pageSize: Int) {
        self.position = position
        self.pageSize = pageSize
    }

    /// The first read: the position to read after.
    mutating func start() -> Int64? { readIfIdle() }

    /// A commit reached the namespace: the position to read after, or nil when a read is in flight.
    mutating func committed() -> Int64? {
        if reading {
            committedWhileReading = true
            return nil
        }
        return readIfIdle()
    }

    /// A page arrived, its entries ending at `last` (nil: none) and `count` of them: the position to read
    /// after next, when more may be there (a full page, or a commit came meanwhile); nil to wait.
    mutating func received(count: Int, last: Int64?) -> Int64? {
        reading = false
        if let last { position = max(position, last) }
        let more = count >= pageSize || committedWhileReading
        committedWhileReading = false
        return more ? readIfIdle() : nil
    }

    private mutating func readIfIdle() -> Int64? {
        guard !reading else { return nil }
        reading = true
        return position
    }
}
