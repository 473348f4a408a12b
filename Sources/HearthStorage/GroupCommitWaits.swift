/// When a ``GroupCommitThread``'s storage thread sleeps, for what, and who must wake it, as a value: the
/// thread's shell asks ``next(jobs:closing:groupMax:deadlinePassed:)`` what to do, waits on its
/// condition when told to, and signals only when a method here says a wake is due (a wake costs
/// several µs in a VM, and most appends need none).
///
/// The one subtlety is the fuller-group wait: while the last group's completions still run, their
/// writers may be about to append their next writes, and one commit of them all pays one fsync (or
/// round trip) instead of two. So with completions running the thread waits, up to a short deadline,
/// for them to end before taking a group; their end wakes it, appends do not.
struct GroupCommitWaits: Equatable {
    enum Phase: Equatable {
        /// Committing, catching up or running completions' hand-off: nobody needs to wake it.
        case working
        /// Asleep until a job, a catch-up request or a close (timed while completions run).
        case waitingForJobs
        /// Jobs are there; waiting for the running completions to end first. `catchUp` was requested.
        case waitingForFullerGroup(catchUp: Bool)
    }

    /// What the storage thread does next.
    enum Step: Equatable {
        /// Sleep until signalled; `timed`: also until the fuller-group wait's length passed, since
        /// completions are running and their end signals only a waiting thread.
        case waitForJobs(timed: Bool)
        /// Sleep until signalled or the fuller-group deadline (set when this wait began) passed.
        case waitForFullerGroup
        /// Take a turn from the queue, catching up first when `catchUp`.
        case take(catchUp: Bool)
        /// Closing with nothing left: finish.
        case end
    }

    private(set) var phase = Phase.working
    /// Someone asked for a catch-up (a notification, a timer): done before the next group.
    private(set) var catchUpRequested = false
    /// Groups whose success completions are queued or running.
    private(set) var groupsCompleting = 0

    /// The next step, given the queue's `jobs` and whether it is `closing`; `deadlinePassed` when the
    /// fuller-group wait timed out.
    mutating func next(jobs: Int, closing: Bool, groupMax: Int, deadlinePassed: Bool) -> Step {
        if case .waitingForFullerGroup(let catchUp) = phase {
            if groupsCompleting > 0 && !closing && jobs < groupMax && !deadlinePassed { return .waitForFullerGroup }
            phase = .working
            return .take(catchUp: catchUp)
        }
        if jobs == 0 && !closing && !catchUpRequested {
            phase = .waitingForJobs
            return .waitForJobs(timed: groupsCompleting > 0)
        }
        let catchUp = catchUpRequested
        catchUpRequested = false
        phase = .working
        if jobs == 0 && !catchUp { return .end }
        if groupsCompleting > 0 && !closing && jobs < groupMax {
            phase = .waitingForFullerGroup(catchUp: catchUp)
            return .waitForFullerGroup
        }
        return .take(catchUp: catchUp)
    }

    /// A job was queued: true when the thread must be woken for it. While completions run their end
    /// wakes it (or its timed wait ends), so one wake serves the whole group.
    var appendWakes: Bool { phase == .waitingForJobs && groupsCompleting == 0 }

    /// A catch-up is asked for: true when the thread must be woken. Requests made before the thread
    /// gets to them are one catch-up.
    mutating func requestCatchUp() -> Bool {
        guard !catchUpRequested else { return false }
        catchUpRequested = true
        return phase == .waitingForJobs
    }

    /// A group committed; its completions are queued.
    mutating func groupCommitted() { groupsCompleting += 1 }

    /// A group's completions have run: true when the thread must be woken (it waits, and none run now).
    mutating func groupCompleted() -> Bool {
        precondition(groupsCompleting > 0, "a group completed that never committed")
        groupsCompleting -= 1
        return groupsCompleting == 0 && phase != .working
    }
}
