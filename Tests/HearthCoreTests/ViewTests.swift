import Testing
@testable import HearthCore

struct ViewTests {
    static let queries: [(String, QueryParams)] = [
        ("default", .all),
        ("orderByChild score, limitToLast 3", QueryParams(index: .child("score"), limit: QueryLimit(count: 3, anchor: .last))),
        ("orderByChild score, limitToFirst 4", QueryParams(index: .child("score"), limit: QueryLimit(count: 4, anchor: .first))),
        ("orderByKey k03…k12", QueryParams(index: .key, start: QueryBound(value: Node("k03"), name: .min), end: QueryBound(value: Node("k12"), name: .max))),
        ("orderByValue, limitToLast 5", QueryParams(index: .value, limit: QueryLimit(count: 5, anchor: .last))),
        ("orderByChild score 2…5", QueryParams(index: .child("score"), start: QueryBound(value: Node(2), name: .min), end: QueryBound(value: Node(5), name: .max))),
        ("priority, limitToFirst 3", QueryParams(limit: QueryLimit(count: 3, anchor: .first))),
    ]

    static func randomChild(_ random: inout SeededGenerator) -> Node {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return Node(Int.random(in: 0..<8, using: &random))
        case 1: return object([("score", Node(Int.random(in: 0..<8, using: &random))), ("t", Node("x"))])
        case 2: return object([("score", Node(Int.random(in: 0..<8, using: &random)))]).withPriority(.number(Double(Int.random(in: 0..<3, using: &random))))
        case 3: return Node("s\(Int.random(in: 0..<4, using: &random))")
        default: return .empty
        }
    }

    static func key(_ random: inout SeededGenerator) -> ChildKey { ChildKey("k" + String(format2(Int.random(in: 0..<16, using: &random)))) }
    static func format2(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    @Test("Replaying a view's events over its old snapshot gives its new snapshot", arguments: 0..<queries.count)
    func eventsReplayToTheNewSnapshot(queryIndex: Int) throws {
        let (name, params) = Self.queries[queryIndex]
        var random = SeededGenerator(seed: UInt64(queryIndex) * 1000 + 1)
        var tree = DatabaseTree()
        for i in 0..<10 { try tree.set(Path("list/k\(Self.format2(i))"), to: Self.randomChild(&random)) }
        if queryIndex % 2 == 0 { tree.ensureIndex(at: "list", by: params.index) }
        var view = View(path: "list", params: params, tree: tree)
        #expect(view.initialEvents(tree: tree).last?.node == view.value(in: tree))

        var seen = view.value(in: tree)
        for step in 0..<400 {
            let before = seen
            let changes: ChangeSet
            switch Int.random(in: 0..<8, using: &random) {
            case 6:
                // Replace the whole location: the view diffs the old and new children.
                var replacement = Node.empty
                for _ in 0..<Int.random(in: 0..<6, using: &random) {
                    replacement.setChild(Self.key(&random), to: Self.randomChild(&random))
                }
                changes = try tree.set("list", to: replacement)
            case 7:
                // A merge at the root that writes into the listened location.
                changes = try tree.update(.root, with: [(Path("list").appending(Self.key(&random)), Self.randomChild(&random)), ("elsewhere", Node(1))])
            case 0, 1: changes = try tree.set(Path("list").appending(Self.key(&random)), to: Self.randomChild(&random))
            case 2: changes = try tree.set(Path("list").appending(Self.key(&random)).appending("score"), to: Node(Int.random(in: 0..<8, using: &random)))
            case 3: changes = try tree.remove(Path("list").appending(Self.key(&random)))
            case 4:
                let a = Self.key(&random), b = Self.key(&random)
                changes = try tree.update("list", with: a == b ? [(Path([a]), Self.randomChild(&random))] : [(Path([a]), Self.randomChild(&random)), (Path([b, "score"]), Node(3))])
            default:
                changes = try tree.set(Path("list").appending(Self.key(&random)).appending(".priority"), to: Node(Int.random(in: 0..<3, using: &random)))
            }
            let events = view.apply(changes, tree: tree)

            let expected = QueryWindow.node(of: tree.value(at: "list"), params: params, index: tree.index(at: "list", by: params.index))
            #expect(view.value(in: tree) == expected, "\(name) step \(step): snapshot")
            seen = expected

            var replayed = before
            for event in events {
                switch event.type {
                case .childRemoved: replayed.setChild(event.key!, to: .empty)
                case .childAdded, .childChanged: replayed.setChild(event.key!, to: event.node)
                case .childMoved: break
                case .value: #expect(event.node == expected, "\(name) step \(step): value event")
                }
            }
            #expect(replayed.children.keys == expected.children.keys, "\(name) step \(step): replay")
            #expect(Array(replayed.children.map(\.value)) == Array(expected.children.map(\.value)), "\(name) step \(step): replay values")
            #expect(events.contains { $0.type == .value } == (before != expected), "\(name) step \(step): value iff changed")
            #expect(events.map(\.type) == events.map(\.type).sorted(), "\(name) step \(step): raise order")

            // previousKey is the key before the child in the query's order.
            let order = QueryWindow.entries(of: tree.value(at: "list"), params: QueryParams(index: params.index, start: QueryBound(value: .empty, name: .min)))
                .filter { expected.children[$0.key] != nil }.map(\.key)
            for event in events where event.type != .value && event.type != .childRemoved {
                let position = order.firstIndex(of: event.key!)!
                #expect(event.previousKey == (position == 0 ? nil : order[position - 1]), "\(name) step \(step): previousKey of \(event)")
            }
        }
    }

    @Test("A limit window slides: limitToLast(2) of key-1…key-3, key-2 deleted → key-1 enters (syncPointSpec)")
    func limitWindowSlidesWhenAMemberIsDeleted() throws {
        var tree = DatabaseTree()
        for i in 1...3 { try tree.set(Path("q/key-\(i)"), to: Node(i)) }
        var view = View(path: "q", params: QueryParams(limit: QueryLimit(count: 2, anchor: .last)), tree: tree)
        #expect(view.value(in: tree).children.keys == ["key-2", "key-3"])
        let events = view.apply(try tree.remove("q/key-2"), tree: tree)
        #expect(events.map(\.description) == ["child_removed key-2", "child_added key-1", "value"])
        #expect(view.value(in: tree) == object([("key-1", Node(1)), ("key-3", Node(3))]))
    }

    @Test func childMovedFiresWhenTheOrderValueChanges() throws {
        var tree = DatabaseTree()
        try tree.set("s", to: object([("a", object([("score", Node(1))])), ("b", object([("score", Node(2))]))]))
        var view = View(path: "s", params: QueryParams(index: .child("score")), tree: tree)
        let events = view.apply(try tree.set("s/a/score", to: Node(3)), tree: tree)
        #expect(events.map(\.description) == ["child_moved a after b", "child_changed a after b", "value"])
    }

    @Test func aViewRaisesEventsOnlyForChangesAtAboveOrBelowItsLocation() throws {
        var tree = DatabaseTree()
        try tree.set("a/b/c", to: Node(1))
        try tree.set("x", to: Node(1))
        var views: [Path: View] = [:]
        for path: Path in [.root, "a/b", "a/b/c", "x"] {
            let view = View(path: path, tree: tree)
            #expect(view.initialEvents(tree: tree).last?.type == .value)
            views[path] = view
        }
        func apply(_ changes: ChangeSet) -> [Path: [String]] {
            var delivered: [Path: [String]] = [:]
            for path in views.keys {
                let events = views[path]!.apply(changes, tree: tree)
                if !events.isEmpty { delivered[path] = events.map(\.description) }
            }
            return delivered
        }
        let delivered = apply(try tree.set("a/b", to: object([("c", Node(2))])))
        #expect(Set(delivered.keys) == [.root, "a/b", "a/b/c"])
        let again = apply(try tree.set("a/b/c", to: Node(3)))
        #expect(Set(again.keys) == [.root, "a/b", "a/b/c"])
        #expect(again["a/b"] == ["child_changed c", "value"])
        #expect(again["a/b/c"] == ["value"])
        #expect(apply(try tree.set("y", to: Node(1))) == [.root: ["child_added y after x", "value"]])
    }
}
