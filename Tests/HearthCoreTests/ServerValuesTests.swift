import Testing
@testable import HearthCore

/// Server values per docs/protocol.md §5.5, with placeholders built the way the JSON reader leaves
/// them: `{".sv": …}` as a node with one child `.sv`, a placeholder priority as a `.priority` child.
@Suite struct ServerValuesTests {
    static let now: Int64 = 1_700_000_000_000
    static let timestamp = Node([".sv": Node("timestamp")])
    static func increment(_ delta: Node) -> Node { Node([".sv": Node(["increment": delta])]) }

    /// A tree holding `pairs` at their paths.
    static func tree(_ pairs: [(Path, Node)]) -> Node {
        var root = Node.empty
        for (path, value) in pairs { root.set(path, to: value) }
        return root
    }

    static func resolve(_ value: Node, at path: Path = "a", in root: Node = .empty) throws(DataError) -> Node {
        try ServerValues.resolve(value, at: path, in: root, now: now)
    }

    // MARK: Finding placeholders

    @Test func containsPlaceholdersFindsThemAtAnyDepth() {
        #expect(ServerValues.containsPlaceholders(Self.timestamp))
        #expect(ServerValues.containsPlaceholders(Node(["x": Node(["y": Self.increment(Node(1))])])))
        #expect(ServerValues.containsPlaceholders(Node(["x": Node(1), ".priority": Self.timestamp])))
        // Malformed ones count too, so that resolve gets the chance to reject them.
        #expect(ServerValues.containsPlaceholders(Node([".sv": Node("tomorrow")])))
    }

    @Test func containsPlaceholdersIsFalseForPlainData() {
        #expect(!ServerValues.containsPlaceholders(.empty))
        #expect(!ServerValues.containsPlaceholders(Node("timestamp")))
        #expect(!ServerValues.containsPlaceholders(Node(["sv": Node("timestamp"), "b": Node(["c": Node(true)])])))
    }

    // MARK: Timestamp

    @Test func timestampBecomesIntegerMilliseconds() throws {
        let resolved = try Self.resolve(Self.timestamp)
        #expect(resolved.leafValue == .integer(Self.now))
    }

    @Test func nestedTimestampsResolveAndOtherDataIsKept() throws {
        let value = Node(["at": Self.timestamp, "text": Node("hi"), "meta": Node(["seen": Self.timestamp])])
        let resolved = try Self.resolve(value)
        #expect(resolved == Node(["at": Node(Self.now), "text": Node("hi"), "meta": Node(["seen": Node(Self.now)])]))
    }

    @Test func valueWithoutPlaceholdersIsReturnedSharingStorage() throws {
        let value = Node(["a": Node(["b": Node(1)]), "c": Node("x")])
        let resolved = try Self.resolve(value)
        #expect(resolved.children.isIdentical(to: value.children))
    }

    @Test func placeholderNodePriorityIsKept() throws {
        let value = Self.timestamp.withPriority(.number(5))
        let resolved = try Self.resolve(value)
        #expect(resolved == Node(Self.now).withPriority(.number(5)))
    }

    // MARK: Increment

    @Test func incrementOfMissingValueIsTheDelta() throws {
        #expect(try Self.resolve(Self.increment(Node(3))).leafValue == .integer(3))
        #expect(try Self.resolve(Self.increment(Node(2.5))).leafValue == .double(2.5))
    }

    @Test(arguments: [Node("12"), Node(true), Node(["x": Node(1)])])
    func incrementOfNonNumberIsTheDelta(current: Node) throws {
        let root = Self.tree([("a", current)])
        #expect(try Self.resolve(Self.increment(Node(7)), in: root).leafValue == .integer(7))
    }

    @Test func integerPlusIntegerStaysInteger() throws {
        let root = Self.tree([("a", Node(Int64(9_007_199_254_740_993)))])
        // Beyond 2^53 the sum is only exact as an integer.
        #expect(try Self.resolve(Self.increment(Node(2)), in: root).leafValue == .integer(9_007_199_254_740_995))
    }

    @Test func integerOverflowBecomesDouble() throws {
        let root = Self.tree([("a", Node(Int64.max))])
        let resolved = try Self.resolve(Self.increment(Node(1)), in: root)
        #expect(resolved.leafValue == .double(Double(Int64.max) + 1))
    }

    @Test func anyDoubleMakesADouble() throws {
        let root = Self.tree([("a", Node(1.25))])
        #expect(try Self.resolve(Self.increment(Node(2)), in: root).leafValue == .double(3.25))
        let integerRoot = Self.tree([("a", Node(2))])
        #expect(try Self.resolve(Self.increment(Node(-0.5)), in: integerRoot).leafValue == .double(1.5))
    }

    @Test func incrementReadsItsOwnLocationAndIgnoresThePriority() throws {
        let root = Self.tree([("counters/x", Node(10).withPriority(.number(99))), ("counters/y", Node(20))])
        let value = Node(["x": Self.increment(Node(1)), "y": Self.increment(Node(-5)), "z": Self.increment(Node(4))])
        let resolved = try Self.resolve(value, at: "counters", in: root)
        #expect(resolved == Node(["x": Node(11), "y": Node(15), "z": Node(4)]))
    }

    @Test func mergeResolvesEachKeyAgainstThePreMergeTree() throws {
        // update({"a/n": increment(1), "b": {"n": increment(1)}}) on {"a": {"n": 1}, "b": {"n": 5}}.
        let before = Self.tree([("a/n", Node(1)), ("b/n", Node(5))])
        var after = before
        for (path, value) in [(Path("a/n"), Self.increment(Node(1))), (Path("b"), Node(["n": Self.increment(Node(1))]))] {
            after.set(path, to: try ServerValues.resolve(value, at: path, in: before, now: Self.now))
        }
        #expect(after == Self.tree([("a/n", Node(2)), ("b/n", Node(6))]))
    }

    // MARK: Priorities

    @Test func priorityPlaceholderBecomesThePriority() throws {
        let value = Node(["x": Node(1), ".priority": Self.timestamp])
        let resolved = try Self.resolve(value)
        #expect(resolved == Node(["x": Node(1)]).withPriority(.number(Double(Self.now))))
    }

    @Test func priorityIncrementAddsToTheCurrentPriority() throws {
        let root = Self.tree([("a", Node(["x": Node(1)]).withPriority(.number(4)))])
        let value = Node(["x": Node(2), ".priority": Self.increment(Node(3))])
        #expect(try Self.resolve(value, in: root) == Node(["x": Node(2)]).withPriority(.number(7)))
    }

    @Test func setPriorityWithAPlaceholder() throws {
        // A write to `a/.priority` carries the placeholder itself.
        let root = Self.tree([("a", Node("v").withPriority(.number(1)))])
        #expect(try Self.resolve(Self.increment(Node(1)), at: "a/.priority", in: root) == Node(2))
    }

    @Test func exportFormValueWithPlaceholderPriority() throws {
        let value = Node([".value": Node("v"), ".priority": Self.timestamp])
        #expect(try Self.resolve(value) == Node("v").withPriority(.number(Double(Self.now))))
    }

    // MARK: Rejected placeholders

    @Test(arguments: [
        Node([".sv": Node("now")]),
        Node([".sv": Node(1)]),
        Node([".sv": Node(["increment": Node("1")])]),
        Node([".sv": Node(["increment": Node(true)])]),
        Node([".sv": Node(["increment": Node(1), "by": Node(2)])]),
        Node([".sv": Node(["decrement": Node(1)])]),
        Node([".sv": Node("timestamp"), "other": Node(1)]),
    ])
    func malformedPlaceholderIsRejectedNamingThePath(placeholder: Node) {
        let value = Node(["ok": Node(1), "bad": Node(["deep": placeholder])])
        #expect {
            try ServerValues.resolve(value, at: "posts/1", in: .empty, now: Self.now)
        } throws: { error in
            guard let error = error as? DataError else { return false }
            return error.code == .invalidServerValue && error.message.contains("/posts/1/bad/deep")
        }
    }

    @Test func incrementPastTheLargestDoubleIsRejected() {
        let root = Self.tree([("a", Node(Double.greatestFiniteMagnitude))])
        #expect(throws: DataError.self) {
            try Self.resolve(Self.increment(Node(Double.greatestFiniteMagnitude)), in: root)
        }
    }
}
