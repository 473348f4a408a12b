import HearthCore
@testable import HearthTriggers
import Testing

@testable import HearthFunctions

/// The decisions of a functions process: one location at a time, in feed order; locations at once; a
/// cursor that passes an entry only when all its events are done.
struct EventScheduleTests {
    private func job(_ position: Int64, _ location: String, function: Int = 0) -> EventSchedule.Job {
        EventSchedule.Job(
            function: function,
            event: TriggerEvent(
                id: "\(position)-0", position: position, kind: .created, location: Path(location), parameters: [:], before: .empty,
                after: Node(1), beforeOmitted: false, time: 0, authType: "admin", authId: nil, channel: "rest"))
    }

    @Test func oneLocationRunsItsEventsOneAtATimeInOrder() {
        var schedule = EventSchedule(cursor: 0)
        schedule.receive(position: 10, jobs: [job(10, "a/1")])
        schedule.receive(position: 20, jobs: [job(20, "a/1")])
        let first = schedule.next()
        #expect(first?.event.position == 10)
        #expect(schedule.next() == nil, "the second event of a/1 waits for the first")
        schedule.finish(first!)
        #expect(schedule.next()?.event.position == 20)
    }

    @Test func differentLocationsRunAtOnce() {
        var schedule = EventSchedule(cursor: 0)
        schedule.receive(position: 10, jobs: [job(10, "a/1"), job(10, "a/2")])
        schedule.receive(position: 20, jobs: [job(20, "a/3")])
        let started = [schedule.next(), schedule.next(), schedule.next()].compactMap { $0?.event.location }
        #expect(started == [Path("a/1"), Path("a/2"), Path("a/3")])
    }

    @Test func theCursorPassesAnEntryOnlyWhenAllItsEventsAndAllBeforeAreDone() {
        var schedule = EventSchedule(cursor: 5)
        schedule.receive(position: 10, jobs: [job(10, "a/1"), job(10, "a/2")])
        schedule.receive(position: 20, jobs: [job(20, "a/3")])
        schedule.receive(position: 30, jobs: [])
        let a1 = schedule.next()!, a2 = schedule.next()!, a3 = schedule.next()!
        schedule.finish(a3)
        #expect(schedule.cursor == 5, "entry 20 is done but 10 is not")
        schedule.finish(a1)
        #expect(schedule.cursor == 5)
        schedule.finish(a2)
        #expect(schedule.cursor == 30, "10 and 20 done, and 30 had no events")
        #expect(schedule.buffered == 0)
    }

    @Test func anEntryWithNoEventsMovesTheCursorAtOnce() {
        var schedule = EventSchedule(cursor: 0)
        schedule.receive(position: 8192, jobs: [])
        #expect(schedule.cursor == 8192)
    }

    @Test func anEntryReadAgainAfterAReconnectionIsIgnored() {
        var schedule = EventSchedule(cursor: 0)
        schedule.receive(position: 10, jobs: [job(10, "a/1")])
        schedule.receive(position: 10, jobs: [job(10, "a/1")])
        #expect(schedule.buffered == 1)
        schedule.receive(position: 3, jobs: [job(3, "a/1")])
        #expect(schedule.buffered == 1)
    }

    @Test func manyEntriesKeepOrderPerLocationAndEndAtTheLastPosition() {
        var schedule = EventSchedule(cursor: 0)
        var expected: [String: [Int64]] = [:]
        for index in 1...10_000 {
            let position = Int64(index) * 8192
            let location = "p/\(index % 7)"
            schedule.receive(position: position, jobs: [job(position, location)])
            expected[Path(location).description, default: []].append(position)
        }
        var seen: [String: [Int64]] = [:]
        var running: [EventSchedule.Job] = []
        while true {
            while let next = schedule.next() { running.append(next) }
            guard !running.isEmpty else { break }
            // Finish them in reverse of starting: order within a location must hold anyway.
            let done = running.removeLast()
            seen[done.event.location.description, default: []].append(done.event.position)
            schedule.finish(done)
        }
        #expect(seen == expected, "a location's events ran out of feed order")
        #expect(schedule.cursor == 10_000 * 8192)
    }
}
