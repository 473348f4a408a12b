import Testing

@testable import HearthStorage

/// The storage thread's sleeps and wakes, without a thread: when it waits for jobs or for a fuller
/// group, and which events must signal it. (`#expect` cannot call a mutating method, hence the named
/// answers.)
struct GroupCommitWaitsTests {
    @Test func anIdleThreadSleepsUntilAnAppendWakesIt() {
        var waits = GroupCommitWaits()
        let idle = waits.next(jobs: 0, closing: false, groupMax: 8, deadlinePassed: false)
        #expect(idle == .waitForJobs(timed: false) && waits.appendWakes)
        let woken = waits.next(jobs: 1, closing: false, groupMax: 8, deadlinePassed: false)
        #expect(woken == .take(catchUp: false) && !waits.appendWakes, "a working thread needs no wake")
    }

    @Test func whileCompletionsRunAppendsDoNotWakeAndTheGroupWaitsForThemToEnd() {
        var waits = GroupCommitWaits()
        waits.groupCommitted()
        let idle = waits.next(jobs: 0, closing: false, groupMax: 8, deadlinePassed: false)
        #expect(idle == .waitForJobs(timed: true), "the completions' end or a short deadline ends this sleep")
        #expect(!waits.appendWakes)
        let withJobs = waits.next(jobs: 2, closing: false, groupMax: 8, deadlinePassed: false)
        #expect(withJobs == .waitForFullerGroup)
        let stillWaiting = waits.next(jobs: 3, closing: false, groupMax: 8, deadlinePassed: false)
        #expect(stillWaiting == .waitForFullerGroup)
        let completedWakes = waits.groupCompleted()
        #expect(completedWakes, "the thread waits for exactly this")
        let taken = waits.next(jobs: 3, closing: false, groupMax: 8, deadlinePassed: false)
        #expect(taken == .take(catchUp: false))
    }

    @Test func theFullerGroupWaitEndsAtTheDeadlineAFullGroupOrAClose() {
        for (jobs, closing, deadlinePassed) in [(2, false, true), (8, false, false), (2, true, false)] {
            var waits = GroupCommitWaits()
            waits.groupCommitted()
            let first = waits.next(jobs: 1, closing: false, groupMax: 8, deadlinePassed: false)
            #expect(first == .waitForFullerGroup)
            let then = waits.next(jobs: jobs, closing: closing, groupMax: 8, deadlinePassed: deadlinePassed)
            #expect(then == .take(catchUp: false), "jobs \(jobs), closing \(closing), deadline passed \(deadlinePassed)")
        }
        var full = GroupCommitWaits()
        full.groupCommitted()
        let alreadyFull = full.next(jobs: 8, closing: false, groupMax: 8, deadlinePassed: false)
        #expect(alreadyFull == .take(catchUp: false), "a full group does not wait at all")
    }

    @Test func catchUpRequestsCoalesceAndWakeOnlyASleepingThread() {
        var waits = GroupCommitWaits()
        let whileWorking = waits.requestCatchUp()
        let again = waits.requestCatchUp()
        #expect(!whileWorking && !again && waits.catchUpRequested)
        let step = waits.next(jobs: 0, closing: false, groupMax: 8, deadlinePassed: false)
        #expect(step == .take(catchUp: true) && !waits.catchUpRequested, "one catch-up for both requests")

        let sleeping = waits.next(jobs: 0, closing: false, groupMax: 8, deadlinePassed: false)
        let wakes = waits.requestCatchUp()
        #expect(sleeping == .waitForJobs(timed: false) && wakes)
    }

    @Test func aCatchUpRequestedDuringTheFullerGroupWaitIsKeptForTheTurn() {
        var waits = GroupCommitWaits()
        _ = waits.requestCatchUp()
        waits.groupCommitted()
        let waiting = waits.next(jobs: 1, closing: false, groupMax: 8, deadlinePassed: false)
        let taken = waits.next(jobs: 1, closing: false, groupMax: 8, deadlinePassed: true)
        #expect(waiting == .waitForFullerGroup && taken == .take(catchUp: true))
    }

    @Test func closingWithNothingLeftEnds() {
        var waits = GroupCommitWaits()
        let end = waits.next(jobs: 0, closing: true, groupMax: 8, deadlinePassed: false)
        #expect(end == .end)
        var draining = GroupCommitWaits()
        let last = draining.next(jobs: 2, closing: true, groupMax: 8, deadlinePassed: false)
        #expect(last == .take(catchUp: false), "what is queued still commits")
    }

    @Test func aCompletionEndingWakesOnlyAWaitingThreadAndOnlyTheLastOfSeveral() {
        var waits = GroupCommitWaits()
        waits.groupCommitted()
        waits.groupCommitted()
        let firstEnds = waits.groupCompleted()
        #expect(!firstEnds, "a thread at work needs no wake")
        _ = waits.next(jobs: 0, closing: false, groupMax: 8, deadlinePassed: false)
        waits.groupCommitted()
        let notLast = waits.groupCompleted()
        let last = waits.groupCompleted()
        #expect(!notLast && last)
    }
}
