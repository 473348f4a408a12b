import Testing
@testable import HearthCore

/// The code examples of docs/hearth-core.md, compiled and checked so the guide stays true.
struct DocumentationExampleTests {
    @Test func valueModelExample() {
        var node = Node.empty
        node.set("users/ada/name", to: Node("Ada"))
        node.set("users/ada/.priority", to: Node(1))
        #expect(node.child(at: "users/ada").priority == .number(1))
        node.set("users/ada/name", to: .empty)
        #expect(node.isEmpty)
    }

    @Test func orderingExample() {
        #expect(ChildKey("10") < ChildKey("010"))
        #expect(ChildKey("🐵") < ChildKey("\u{E000}"))
        #expect(ValueOrder.compare(Node(true), Node(0)) == -1)
    }

    @Test func codecExample() throws {
        let value = try Node(json: #"{"b": {".value": 2, ".priority": 1}, "a": [true, null, "x"]}"#)
        #expect(value.json(.export) == #"{"a":{"0":true,"2":"x"},"b":{".value":2,".priority":1}}"#)
        #expect(value.json(.rest) == #"{"a":[true,null,"x"],"b":2}"#)
    }

    @Test func writesExample() throws {
        var tree = DatabaseTree()
        try tree.set("jokes/j1", to: Node(["votes": Node(3)]))
        let hash = tree.value(at: "jokes/j1").hash
        let change = try tree.update("jokes/j1", with: [("votes", Node([".sv": Node(["increment": Node(1)])])), ("at", Node([".sv": Node("timestamp")]))],
                                     now: 1_700_000_000_000)
        #expect(change.changes.count == 2)
        #expect(tree.value(at: "jokes/j1/votes") == Node(4))
        #expect(tree.value(at: "jokes/j1/at") == Node(Int64(1_700_000_000_000)))
        #expect(throws: DataError(.hashMismatch, "Transaction hash does not match")) {
            try tree.set("jokes/j1", to: .empty, ifHash: hash)
        }
    }

    @Test func queryExample() throws {
        var scores = DatabaseTree()
        try scores.set("scores", to: try Node(json: #"{"a":{"s":5},"b":{"s":1},"c":{"s":3}}"#))
        scores.ensureIndex(at: "scores", by: .child("s"))
        let params = try QueryParams(wireFields: ["l": Node(2), "vf": Node("r"), "i": Node("s")])
        #expect(scores.window(at: "scores", params: params).map(\.key) == ["c", "a"])
    }

    @Test func viewExample() throws {
        var list = DatabaseTree(root: try Node(json: #"{"list":{"key-1":1,"key-2":2,"key-3":3}}"#))
        var view = View(path: "list", params: QueryParams(limit: QueryLimit(count: 2, anchor: .last)), tree: list)
        #expect(view.initialEvents(tree: list).map(\.description) == ["child_added key-2", "child_added key-3 after key-2", "value"])
        let removal = try list.remove("list/key-2")
        #expect(view.apply(removal, tree: list).map(\.description) == ["child_removed key-2", "child_added key-1", "value"])
        #expect(view.apply(try list.set("other", to: Node(1)), tree: list).isEmpty)
    }

    @Test func pushIDExample() {
        var ids = PushIDGenerator()
        let first = ids.next(now: 1_700_000_000_000)
        #expect(first.hasPrefix("-NjEtLV-") && first.count == 20)
        #expect(ids.next(now: 1_700_000_000_000) > first)
    }
}
