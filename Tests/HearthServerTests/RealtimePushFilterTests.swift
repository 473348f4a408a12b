import HearthCore
import Testing

@testable import HearthServer

/// `RealtimeSession.mayPush` lets a broadcast skip listens a write cannot reach; it must never skip one
/// that `pushes(for:at:root:changes:)` would send something to.
struct RealtimePushFilterTests {
    static let before = try! Node(jsonBytes: Array(#"{"a":{"b":{"c":1,"d":2},"e":3},"f":{"g":4}}"#.utf8))

    static let writes: [(Namespace.Write, Node)] = [
        (.set(Path("a/b/c")), try! Node(jsonBytes: Array(#"{"a":{"b":{"c":9,"d":2},"e":3},"f":{"g":4}}"#.utf8))),
        (.set(Path("a")), try! Node(jsonBytes: Array(#"{"a":{"x":1},"f":{"g":4}}"#.utf8))),
        (.set(Path("a/b/.priority")), try! Node(jsonBytes: Array(#"{"a":{"b":{".priority":5,"c":1,"d":2},"e":3},"f":{"g":4}}"#.utf8))),
        (.update(Path("a"), [Path("b/c"), Path("e")]), try! Node(jsonBytes: Array(#"{"a":{"b":{"c":7,"d":2},"e":8},"f":{"g":4}}"#.utf8))),
        (.update(Path("a/b"), []), before),
        (.update(Path(""), [Path("f/g")]), try! Node(jsonBytes: Array(#"{"a":{"b":{"c":1,"d":2},"e":3},"f":{"g":6}}"#.utf8))),
    ]

    static let locations = ["", "a", "a/b", "a/b/c", "a/b/d", "a/e", "f", "f/g", "h", "a/b/c/z"].map { Path($0) }

    @Test("No listen a write pushes to is skipped")
    func filterKeepsEveryListenThatGetsAPush() {
        for (write, after) in Self.writes {
            let changes = ChangeSet([ChangeSet.Change(path: Path(""), old: Self.before, new: after)])
            for location in Self.locations {
                let pushes = RealtimeSession.pushes(for: write, at: location, root: after, changes: changes)
                if !pushes.isEmpty {
                    #expect(RealtimeSession.mayPush(write, to: location), "\(write) at \(location)")
                }
            }
        }
    }

    @Test("Listens beside the written path are skipped")
    func filterSkipsSiblings() {
        #expect(!RealtimeSession.mayPush(.set(Path("w/1")), to: Path("w/2")))
        #expect(!RealtimeSession.mayPush(.update(Path("w/1"), [Path("x")]), to: Path("w/2")))
        #expect(!RealtimeSession.mayPush(.update(Path("a"), [Path("b")]), to: Path("a/c")))
        #expect(RealtimeSession.mayPush(.set(Path("w/1/x")), to: Path("w/1")))
        #expect(RealtimeSession.mayPush(.set(Path("w")), to: Path("w/1")))
    }
}
