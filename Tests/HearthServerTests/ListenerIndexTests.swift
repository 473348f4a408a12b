import HearthCore
import Testing

@testable import HearthServer

final class Listener {
    let name: String
    init(_ name: String) { self.name = name }
}

struct ListenerIndexTests {
    @Test("Every listen a write pushes to is found by the index")
    func indexFindsEveryListenThatGetsAPush() {
        let index = ListenerIndex<Listener>()
        let listeners = RealtimePushFilterTests.locations.map { Listener($0.description) }
        for (listener, location) in zip(listeners, RealtimePushFilterTests.locations) { index.add(listener, at: location) }
        for (write, after) in RealtimePushFilterTests.writes {
            let changes = ChangeSet([ChangeSet.Change(path: Path(""), old: RealtimePushFilterTests.before, new: after)])
            let found = Set(index.listeners(overlapping: write.locations).map { ObjectIdentifier($0) })
            for (listener, location) in zip(listeners, RealtimePushFilterTests.locations) {
                let pushes = RealtimeSession.pushes(for: write, at: location, root: after, changes: changes)
                if !pushes.isEmpty { #expect(found.contains(ObjectIdentifier(listener)), "\(write) at \(location)") }
            }
        }
    }

    @Test func writesFindOnlyListenersOnTheirPathOnce() {
        let index = ListenerIndex<Listener>()
        let above = Listener("w"), own = Listener("w/1"), other = Listener("w/2"), below = Listener("w/1/x")
        index.add(above, at: Path("w"))
        index.add(own, at: Path("w/1"))
        index.add(own, at: Path("w/1"))  // a second listen (another query tag) at the same location
        index.add(own, at: Path("w/1/y"))
        index.add(other, at: Path("w/2"))
        index.add(below, at: Path("w/1/x"))
        let found = index.listeners(overlapping: [Path("w/1")]).map(\.name)
        #expect(found.sorted() == ["w", "w/1", "w/1/x"])
        #expect(index.listeners(overlapping: [Path("v")]).isEmpty)
        #expect(index.listeners(overlapping: [Path("")]).count == 4)
        // A location counts its listens: one removal of two leaves the listener found.
        index.remove(own, at: Path("w/1"))
        #expect(index.listeners(overlapping: [Path("w/1")]).contains { $0 === own })
        index.remove(own, at: Path("w/1"))
        index.remove(own, at: Path("w/1/y"))
        #expect(!index.listeners(overlapping: [Path("w/1")]).contains { $0 === own })
        for (listener, path) in [(above, "w"), (other, "w/2"), (below, "w/1/x")] { index.remove(listener, at: Path(path)) }
        #expect(index.isEmpty)
    }
}
