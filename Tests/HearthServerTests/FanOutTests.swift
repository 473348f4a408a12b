import HearthCore
import HearthProtocol
import HearthStorage
import Testing

@testable import HearthServer

/// A fan-out target that records what it is sent.
final class RecordingTarget: FanOutTarget {
    let name: String
    var received: [[UInt8]] = []
    var accepts = true
    var disconnected = false
    init(_ name: String) { self.name = name }
    func deliver(_ messages: [[UInt8]]) -> Bool {
        received += messages
        return accepts
    }
    func disconnectSlowReader() { disconnected = true }
}

struct FanOutTests {
    static let before = try! Node(jsonBytes: Array(#"{"a":{"b":{"c":1,"d":2},"e":3},"f":{"g":4}}"#.utf8))

    static let writes: [(Write, Node)] = [
        (.set(Path("a/b/c")), try! Node(jsonBytes: Array(#"{"a":{"b":{"c":9,"d":2},"e":3},"f":{"g":4}}"#.utf8))),
        (.set(Path("a")), try! Node(jsonBytes: Array(#"{"a":{"x":1},"f":{"g":4}}"#.utf8))),
        (.set(Path("a/b/.priority")), try! Node(jsonBytes: Array(#"{"a":{"b":{".priority":5,"c":1,"d":2},"e":3},"f":{"g":4}}"#.utf8))),
        (.update(Path("a"), [Path("b/c"), Path("e")]), try! Node(jsonBytes: Array(#"{"a":{"b":{"c":7,"d":2},"e":8},"f":{"g":4}}"#.utf8))),
        (.update(Path("a/b"), []), before),
        (.update(Path(""), [Path("f/g")]), try! Node(jsonBytes: Array(#"{"a":{"b":{"c":1,"d":2},"e":3},"f":{"g":6}}"#.utf8))),
        (.set(Path("f")), try! Node(jsonBytes: Array(#"{"a":{"b":{"c":1,"d":2},"e":3},"f":{"g":4}}"#.utf8))),
    ]

    static let locations = ["", "a", "a/b", "a/b/c", "a/b/d", "a/e", "f", "f/g", "h", "a/b/c/z"].map { Path($0) }

    static func change(_ write: Write, _ after: Node) -> CommittedChange {
        CommittedChange(write: write, root: after, changes: ChangeSet([ChangeSet.Change(path: Path(""), old: before, new: after)]))
    }

    /// One realtime and two SSE subscriptions (REST and export format) at every location.
    static func subscribed() -> (FanOut, [(Path, FanOut.Encoding, RecordingTarget)]) {
        var fanOut = FanOut()
        var targets: [(Path, FanOut.Encoding, RecordingTarget)] = []
        var id: UInt64 = 0
        for location in locations {
            for encoding in [FanOut.Encoding.realtime(tag: nil), .sse(exportFormat: false), .sse(exportFormat: true)] {
                id += 1
                let target = RecordingTarget("\(encoding) at \(location)")
                fanOut.subscribe(FanOut.Key(subscriber: id, location: location, tag: nil),
                                 FanOut.Subscription(target: target, encoding: encoding, params: nil, window: .empty))
                targets.append((location, encoding, target))
            }
        }
        return (fanOut, targets)
    }

    @Test("A write reaches exactly the subscriptions whose protocol has something to say, once each")
    func plansExactlyTheMessagesOfEachSubscription() {
        for (write, after) in Self.writes {
            var (fanOut, targets) = Self.subscribed()
            let change = Self.change(write, after)
            var got: [ObjectIdentifier: [[UInt8]]] = [:]
            for delivery in fanOut.plan(change) { got[ObjectIdentifier(delivery.target), default: []] += delivery.messages }
            for (location, encoding, target) in targets {
                let expected: [[UInt8]]
                switch encoding {
                case .realtime: expected = RealtimePushes.pushes(for: change, at: location)
                case .sse(let export): expected = SSE.event(for: change, at: location, exportFormat: export).map { [$0] } ?? []
                }
                #expect(got[ObjectIdentifier(target)] ?? [] == expected, "\(write): \(target.name)")
            }
        }
    }

    @Test("A realtime listen hears a write above it only when its own value changed")
    func writeAboveThatLeavesTheLocationAloneIsSilent() {
        var (fanOut, targets) = Self.subscribed()
        let (write, after) = Self.writes[6]  // `f` rewritten with the value it had
        let reached = Set(fanOut.plan(Self.change(write, after)).map { ObjectIdentifier($0.target) })
        let realtimeAtFG = targets.first { $0.0 == Path("f/g") && $0.1 == .realtime(tag: nil) }!.2
        #expect(!reached.contains(ObjectIdentifier(realtimeAtFG)))
        let sseAtFG = targets.first { $0.0 == Path("f/g") && $0.1 == .sse(exportFormat: false) }!.2
        #expect(reached.contains(ObjectIdentifier(sseAtFG)))
    }

    @Test("Listens beside the written path are not reached")
    func siblingsAreSkipped() {
        #expect(!Write.set(Path("w/1")).mayReach(Path("w/2")))
        #expect(!Write.update(Path("w/1"), [Path("x")]).mayReach(Path("w/2")))
        #expect(!Write.update(Path("a"), [Path("b")]).mayReach(Path("a/c")))
        #expect(Write.set(Path("w/1/x")).mayReach(Path("w/1")))
        #expect(Write.set(Path("w")).mayReach(Path("w/1")))
        #expect(Write.update(Path("a"), []).mayReach(Path("")))
    }

    @Test("A merge of several keys under one listen delivers to it once")
    func severalWrittenPathsPlanALocationOnce() {
        var fanOut = FanOut()
        let target = RecordingTarget("root")
        fanOut.subscribe(FanOut.Key(subscriber: 1, location: .root, tag: nil),
                         FanOut.Subscription(target: target, encoding: .realtime(tag: nil), params: nil, window: .empty))
        let (write, after) = Self.writes[3]
        let deliveries = fanOut.plan(Self.change(write, after))
        #expect(deliveries.count == 1)
        #expect(deliveries.first?.messages.count == 1)
    }

    @Test("A query subscription gets its window again only when the write changed it")
    func queryWindowsAreSentWhenTheyChange() throws {
        var fanOut = FanOut()
        let target = RecordingTarget("top two")
        let params = try QueryParams(wireFields: ["l": Node(2), "vf": Node("r"), "i": Node(".value")])
        var root = try Node(json: #"{"scores":{"a":1,"b":5,"c":9}}"#)
        let window = QueryWindow.node(of: root.child(at: Path("scores")), params: params)
        fanOut.subscribe(FanOut.Key(subscriber: 7, location: Path("scores"), tag: 3),
                         FanOut.Subscription(target: target, encoding: .realtime(tag: 3), params: params, window: window))
        func write(_ path: String, _ value: Int) -> [FanOut.Delivery] {
            let old = root
            _ = root.set(Path(path), to: Node(Int64(value)))
            return fanOut.plan(CommittedChange(
                write: .set(Path(path)), root: root, changes: ChangeSet([ChangeSet.Change(path: .root, old: old, new: root)])))
        }
        #expect(write("scores/a", 2).isEmpty)  // outside the top two
        let pushed = write("scores/a", 10)
        #expect(pushed.count == 1)
        let text = String(decoding: pushed.first?.messages.first ?? [], as: UTF8.self)
        #expect(text.contains(#""q":3"#) || text.contains(#""t":3"#))
        #expect(text.contains(#""a":10"#) && text.contains(#""c":9"#) && !text.contains(#""b":5"#))
        #expect(write("scores/a", 10).isEmpty)  // same window as last sent
        #expect(fanOut.subscription(FanOut.Key(subscriber: 7, location: Path("scores"), tag: 3))?.window
            == QueryWindow.node(of: root.child(at: Path("scores")), params: params))
    }

    @Test func unsubscribingForgetsTheSubscriptionAndPrunesItsLocation() {
        var fanOut = FanOut()
        let target = RecordingTarget("x")
        let keys = [FanOut.Key(subscriber: 1, location: Path("w/1"), tag: nil), FanOut.Key(subscriber: 1, location: Path("w/1"), tag: 4),
                    FanOut.Key(subscriber: 2, location: Path("w/1/x"), tag: nil)]
        for key in keys {
            fanOut.subscribe(key, FanOut.Subscription(target: target, encoding: .realtime(tag: key.tag), params: nil, window: .empty))
        }
        fanOut.subscribe(keys[0], FanOut.Subscription(target: target, encoding: .realtime(tag: nil), params: nil, window: .empty))
        #expect(fanOut.count == 3)
        fanOut.unsubscribe(keys[0])
        fanOut.unsubscribe(keys[0])
        #expect(fanOut.count == 2)
        #expect(fanOut.subscription(keys[1]) != nil)
        for key in keys { fanOut.unsubscribe(key) }
        #expect(fanOut.isEmpty)
        #expect(fanOut.plan(Self.change(.set(Path("w")), Self.before)).isEmpty)
    }

    @Test("A slow target is cut off once, after everyone else was served")
    func publishCutsOffSlowTargets() throws {
        let namespace = try Self.namespace()
        let slow = RecordingTarget("slow"), fine = RecordingTarget("fine")
        slow.accepts = false
        for (id, target) in [(UInt64(1), slow), (2, fine)] {
            for location in [Path("a"), Path("a/b")] {
                namespace.listeners.subscribe(FanOut.Key(subscriber: id, location: location, tag: nil),
                                              FanOut.Subscription(target: target, encoding: .realtime(tag: nil), params: nil, window: .empty))
            }
        }
        let (write, after) = Self.writes[0]
        namespace.publish(Self.change(write, after))
        #expect(slow.disconnected && !fine.disconnected)
        #expect(fine.received.count == 2)
    }

    static func namespace() throws -> Namespace {
        let engine = InMemoryStorageEngine()
        return Namespace(
            name: "test", database: DurableDatabase(engine: engine, root: before, finishOn: nil),
            rules: NamespaceRegistry.defaultRules(emulator: true), rulesDeployed: false)
    }
}
