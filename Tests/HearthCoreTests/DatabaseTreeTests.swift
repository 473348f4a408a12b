import Testing
@testable import HearthCore

struct DatabaseTreeTests {
    @Test func setReadAndRemoveDropEmptyAncestors() throws {
        var tree = DatabaseTree()
        try tree.set("users/ada/name", to: Node("Ada"))
        try tree.set("users/ada/age", to: Node(36))
        #expect(tree.value(at: "users/ada").childCount == 2)
        let change = try tree.remove("users/ada/name")
        #expect(change.changes == [ChangeSet.Change(path: "users/ada/name", old: Node("Ada"), new: .empty)])
        try tree.remove("users/ada/age")
        #expect(tree.root.isEmpty)
    }

    @Test func snapshotsAreUnchangedByLaterWrites() throws {
        var tree = DatabaseTree()
        try tree.set("a/b", to: Node(1))
        let snapshot = tree.root
        try tree.set("a/c", to: Node(2))
        try tree.set("a/b", to: Node(3))
        #expect(snapshot.child(at: "a") == object([("b", Node(1))]))
        #expect(tree.value(at: "a") == object([("b", Node(3)), ("c", Node(2))]))
    }

    @Test func priorityWritesChangeOnlyThePriority() throws {
        var tree = DatabaseTree()
        try tree.set("a", to: Node("x"))
        let change = try tree.set("a/.priority", to: Node(5))
        #expect(tree.value(at: "a") == Node("x").withPriority(.number(5)))
        #expect(change.changes.first?.path == "a")
        try tree.set("missing/.priority", to: Node(5))
        #expect(tree.value(at: "missing").isEmpty)
        // A set without a priority clears it (docs/protocol.md §5.3).
        try tree.set("a", to: Node("y"))
        #expect(tree.value(at: "a").priority == nil)
    }

    @Test func updateIsAtomicAndRejectsOverlappingPaths() throws {
        var tree = DatabaseTree()
        try tree.set("a", to: object([("x", Node(1)), ("y", Node(2))]))
        let change = try tree.update("a", with: [("x", Node(10)), ("z/deep", Node(true))])
        #expect(change.changes.count == 2)
        #expect(tree.value(at: "a") == object([("x", Node(10)), ("y", Node(2)), ("z", object([("deep", Node(true))]))]))
        #expect(throws: DataError.self) { try tree.update("a", with: [("x", Node(1)), ("x/y", Node(2))]) }
        #expect(throws: DataError.self) { try tree.update("a", with: [("ok", Node(1)), ("bad.key", Node(2))]) }
        #expect(tree.value(at: "a/ok").isEmpty, "nothing is written when any path is invalid")
    }

    @Test func invalidPathsAreRejectedNamingTheKey() {
        var tree = DatabaseTree()
        do {
            try tree.set("a/b#c", to: Node(1))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidKey)
            #expect(error.message.contains("b#c"))
        }
        let deep = Path((0...32).map { ChildKey("k\($0)") })
        #expect(throws: DataError.self) { try tree.set(deep, to: Node(1)) }
    }

    @Test func indexesFollowWrites() throws {
        var tree = DatabaseTree()
        for i in 0..<200 { try tree.set(Path("items/i\(i)/score"), to: Node(i % 17)) }
        tree.ensureIndex(at: "items", by: .child("score"))
        try tree.set("items/i5/score", to: Node(100))
        try tree.remove("items/i6")
        try tree.update("items", with: [("i7/score", Node(-1)), ("new/score", Node(50))])
        let params = QueryParams(index: .child("score"), limit: QueryLimit(count: 5, anchor: .last))
        let indexed = tree.window(at: "items", params: params)
        let scanned = QueryWindow.entries(of: tree.value(at: "items"), params: params)
        #expect(indexed == scanned)
        #expect(indexed.map(\.key.string).suffix(2) == ["new", "i5"])
        // Replacing the whole location rebuilds the index.
        try tree.set("items", to: object([("only", object([("score", Node(1))]))]))
        #expect(tree.index(at: "items", by: .child("score"))?.count == 1)
    }
}

struct DatabaseTreeWriteSemanticsTests {
    @Test("Compare-and-set by hash: a stale hash changes nothing (the wire's datastale)")
    func compareAndSetByHash() throws {
        var tree = DatabaseTree()
        try tree.set("counter", to: Node(4))
        // "eVih19a6ZDz3NL32uVBtg9KSgQY=" is the hash of 4 (docs/protocol.md §4.2).
        try tree.set("counter", to: Node(5), ifHash: "eVih19a6ZDz3NL32uVBtg9KSgQY=")
        #expect(tree.value(at: "counter") == Node(5))
        #expect(throws: DataError(.hashMismatch, "Transaction hash does not match")) {
            try tree.set("counter", to: Node(6), ifHash: "eVih19a6ZDz3NL32uVBtg9KSgQY=")
        }
        #expect(tree.value(at: "counter") == Node(5))
        // "" is the hash of an empty location: a transaction that expects nothing there.
        try tree.set("fresh", to: Node(1), ifHash: "")
        #expect(throws: DataError.self) { try tree.set("fresh", to: Node(2), ifHash: "") }
    }

    @Test func serverValuesResolveAgainstTheTreeBeforeTheWrite() throws {
        var tree = DatabaseTree()
        try tree.set("n", to: Node(10))
        let increment = object([(".sv", object([("increment", Node(5))]))])
        let timestamp = object([(".sv", Node("timestamp"))])
        try tree.update(.root, with: [("n", increment), ("at", timestamp)], now: 1_700_000_000_000)
        #expect(tree.value(at: "n") == Node(15))
        #expect(tree.value(at: "at") == Node(Int64(1_700_000_000_000)))
        #expect(throws: DataError.self) { try tree.set("x", to: timestamp) }
        #expect(tree.value(at: "x").isEmpty)
    }
}
