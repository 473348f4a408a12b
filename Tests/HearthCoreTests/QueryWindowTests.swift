import Testing
@testable import HearthCore

struct QueryWindowTests {
    /// {a: {score: 5}, b: {score: 1}, c: {score: 3}, d: {score: 3}, e: "leaf", f: {other: 1}}
    let scores = object([
        ("a", object([("score", Node(5))])),
        ("b", object([("score", Node(1))])),
        ("c", object([("score", Node(3))])),
        ("d", object([("score", Node(3))])),
        ("e", Node("leaf")),
        ("f", object([("other", Node(1))])),
    ])

    func keys(_ params: QueryParams, node: Node? = nil, indexed: Bool = false) -> [String] {
        let target = node ?? scores
        let index = indexed ? ChildIndex(index: params.index, of: target) : nil
        return QueryWindow.entries(of: target, params: params, index: index).map(\.key.string)
    }

    @Test(arguments: [false, true])
    func orderByChildPutsMissingValuesFirstThenNumbersWithKeyTieBreaks(indexed: Bool) {
        var params = QueryParams(index: .child("score"))
        params.start = QueryBound(value: .empty, name: .min)
        #expect(keys(params, indexed: indexed) == ["e", "f", "b", "c", "d", "a"])
        params.limit = QueryLimit(count: 2, anchor: .last)
        #expect(keys(params, indexed: indexed) == ["d", "a"])
        params.limit = QueryLimit(count: 3, anchor: .first)
        #expect(keys(params, indexed: indexed) == ["e", "f", "b"])
    }

    @Test(arguments: [false, true])
    func rangesUseValueThenKeyName(indexed: Bool) {
        // orderByChild("score").equalTo(3)
        var params = QueryParams(index: .child("score"))
        params.start = QueryBound(value: Node(3), name: .min)
        params.end = QueryBound(value: Node(3), name: .max)
        #expect(keys(params, indexed: indexed) == ["c", "d"])
        // equalTo(3, "d") picks one child.
        params.start = QueryBound(value: Node(3), name: .key("d"))
        params.end = QueryBound(value: Node(3), name: .key("d"))
        #expect(keys(params, indexed: indexed) == ["d"])
        // JS startAfter(3): sp 3, sn [MAX_NAME], sin false.
        params.start = QueryBound(value: Node(3), name: .max, inclusive: false)
        params.end = nil
        #expect(keys(params, indexed: indexed) == ["a"])
        // JS endBefore(3): ep 3, en [MIN_NAME], ein false.
        params.start = nil
        params.end = QueryBound(value: Node(3), name: .min, inclusive: false)
        #expect(keys(params, indexed: indexed) == ["e", "f", "b"])
        // endAt(null) admits only children whose index value is null.
        params.end = QueryBound(value: .empty, name: .max)
        #expect(keys(params, indexed: indexed) == ["e", "f"])
    }

    @Test func keyIndexRangesAndExclusiveStart() {
        let node = object((1...5).map { ("k\($0)", Node($0)) } + [("10", Node(true)), ("9", Node(true))])
        // orderByKey().startAt("k2").endAt("k4")
        var params = QueryParams(index: .key)
        params.start = QueryBound(value: Node("k2"), name: .min)
        params.end = QueryBound(value: Node("k4"), name: .max)
        #expect(keys(params, node: node) == ["k2", "k3", "k4"])
        // JS startAfter("k2") on the key index: sin false.
        params.start = QueryBound(value: Node("k2"), name: .min, inclusive: false)
        #expect(keys(params, node: node) == ["k3", "k4"])
        // Android's successor-key encoding of the same query agrees.
        params.start = QueryBound(value: Node("k2-"), name: .min)
        #expect(keys(params, node: node) == ["k3", "k4"])
        params = QueryParams(index: .key, limit: QueryLimit(count: 3, anchor: .first))
        #expect(keys(params, node: node) == ["9", "10", "k1"])
    }

    @Test func priorityOrderIsNoPriorityThenNumbersThenStrings() {
        let node = object([
            ("a", Node(1).withPriority(.string("x"))),
            ("b", Node(1).withPriority(.number(2))),
            ("c", Node(1)),
            ("d", Node(1).withPriority(.number(-1))),
            ("e", Node(1).withPriority(.string("a"))),
        ])
        let params = QueryParams(limit: QueryLimit(count: 10, anchor: .first))
        #expect(keys(params, node: node) == ["c", "d", "b", "e", "a"])
        #expect(keys(params, node: node, indexed: true) == ["c", "d", "b", "e", "a"])
    }

    @Test func orderByValueUsesTypeOrder() {
        let node = object([
            ("s", Node("str")), ("t", Node(true)), ("f", Node(false)), ("n", Node(-2.5)), ("o", object([("x", Node(1))])),
            ("m", Node(10)),
        ])
        let params = QueryParams(index: .value, limit: QueryLimit(count: 10, anchor: .first))
        #expect(keys(params, node: node) == ["f", "t", "n", "m", "s", "o"])
    }

    @Test func wireQueryObjectsParse() throws {
        // {"sp":5,"sn":"k","sin":true,"ep":5,"en":"k","ein":true,"i":".value"} = orderByValue().equalTo(5,"k")
        let params = try QueryParams(wireFields: [
            "sp": Node(5), "sn": Node("k"), "sin": Node(true), "ep": Node(5), "en": Node("k"), "ein": Node(true), "i": Node(".value"),
        ])
        #expect(params.index == .value)
        #expect(params.start == QueryBound(value: Node(5), name: .key("k")))
        #expect(params.end == QueryBound(value: Node(5), name: .key("k")))
        let limited = try QueryParams(wireFields: ["l": Node(3), "vf": Node("r"), "i": Node("ratings/pos")])
        #expect(limited.limit == QueryLimit(count: 3, anchor: .last))
        #expect(limited.index == .child("ratings/pos"))
        #expect(limited.start == nil && limited.end == nil)
        let sentinel = try QueryParams(wireFields: ["sp": Node(1), "sn": Node("[MAX_KEY]")])
        #expect(sentinel.start?.name == .max)
        #expect(throws: DataError.self) { try QueryParams(wireFields: ["l": Node("x")]) }
        #expect(throws: DataError.self) { try QueryParams(wireFields: ["sp": object([("a", Node(1))])]) }
    }
}
