import Testing

@testable import HearthServer

/// A namespace's memory of applied write IDs: a resend of an applied write is acknowledged, one of a
/// write in flight waits for its outcome, a write not made is forgotten, the oldest go past the capacity.
struct RememberedWritesTests {
    @Test func aResendIsAnsweredAsItsWriteWas() {
        var writes = RememberedWrites<String>(applied: ["old"])
        #expect(writes.admit("old", waiter: "resend of old") == .applied)
        #expect(writes.admit("new", waiter: "first") == .apply)
        #expect(writes.admit("new", waiter: "second") == .waiting)
        #expect(writes.admit("new", waiter: "third") == .waiting)
        #expect(writes.finished("new", applied: true) == ["second", "third"])
        #expect(writes.admit("new", waiter: "fourth") == .applied)
    }

    @Test func aWriteNotMadeIsDecidedAgainWhenSentAgain() {
        var writes = RememberedWrites<String>()
        #expect(writes.admit("refused", waiter: "first") == .apply)
        #expect(writes.admit("refused", waiter: "second") == .waiting)
        #expect(writes.finished("refused", applied: false) == ["second"])
        #expect(writes.admit("refused", waiter: "third") == .apply)
        #expect(writes.appliedCount == 0)
    }

    @Test func theOldestAreForgottenPastTheCapacity() {
        var writes = RememberedWrites<Int>(applied: ["a", "b", "c"], capacity: 3)
        for id in ["d", "e", "f", "g"] {
            #expect(writes.admit(id, waiter: 0) == .apply)
            _ = writes.finished(id, applied: true)
        }
        #expect(writes.appliedCount == 3)
        for id in ["a", "b", "c", "d"] { #expect(writes.admit(id, waiter: 0) == .apply, "\(id) forgotten") }
        for id in ["e", "f", "g"] { #expect(writes.admit(id, waiter: 0) == .applied) }
    }

    @Test func onlyTheNewestOfTheLoadedAreKept() {
        var writes = RememberedWrites<Int>(applied: ["a", "b", "c", "d"], capacity: 2)
        #expect(writes.appliedCount == 2)
        #expect(writes.admit("b", waiter: 0) == .apply)
        #expect(writes.admit("d", waiter: 0) == .applied)
    }
}
