import Testing

@testable import HearthServer

/// When a follower of the change feed reads: one read at a time, again after a full page or a commit
/// that came while reading, and never a commit left unread. (`#expect` cannot call a mutating method,
/// hence the named answers.)
struct ChangeFeedFollowerTests {
    @Test func itReadsFromItsPositionThenWaitsForCommits() {
        var follower = ChangeFeedFollower(after: 100, pageSize: 3)
        let first = follower.start()
        let whileReading = follower.start()
        #expect(first == 100 && whileReading == nil, "one read in flight")
        let afterPage = follower.received(count: 2, last: 300)
        #expect(afterPage == nil && follower.position == 300, "a short page: caught up")
        let commit = follower.committed()
        #expect(commit == 300)
    }

    @Test func aFullPageIsFollowedByTheNext() {
        var follower = ChangeFeedFollower(after: 0, pageSize: 3)
        _ = follower.start()
        let next = follower.received(count: 3, last: 30)
        #expect(next == 30)
    }

    @Test func commitsDuringAReadAreReadOnceAfterIt() {
        var follower = ChangeFeedFollower(after: 0, pageSize: 100)
        _ = follower.start()
        let during = [follower.committed(), follower.committed()]
        #expect(during == [nil, nil], "no second read in flight")
        let again = follower.received(count: 1, last: 10)
        #expect(again == 10, "the read may have missed them")
        let caughtUp = follower.received(count: 0, last: nil)
        #expect(caughtUp == nil && follower.position == 10)
    }
}
