import HearthCore

/// A query as the client builds it and sends it (the listen's `q`, docs/protocol.md §2.4), and the
/// ``QueryParams`` the window engine evaluates: both derived from the same fields, with the params read
/// back through `QueryParams(wireFields:)`, so the client filters exactly as the server does.
///
/// Keys are written as the JS SDK writes them (`sp`, `sn` only when a key name was given, `sin`, `ep`,
/// `en`, `ein`, `l`, `vf`, `i`).
struct WireQuery: Hashable, Sendable {
    var index: QueryIndex = .priority
    var start: Bound?
    var end: Bound?
    var limit: (count: Int, fromLast: Bool)?

    struct Bound: Hashable, Sendable {
        var value: Node
        /// The key name given for ties, or a sentinel (`[MIN_NAME]`/`[MAX_NAME]`); nil when none was given.
        var name: String?
        var inclusive: Bool
    }

    static func == (lhs: WireQuery, rhs: WireQuery) -> Bool { lhs.identifier == rhs.identifier }
    func hash(into hasher: inout Hasher) { hasher.combine(identifier) }

    /// True when the query selects every child: listened to as the location's default listen.
    var loadsAllData: Bool { start == nil && end == nil && limit == nil }

    /// The wire object, keys in a fixed order.
    var json: [UInt8] {
        var writer = JSONObjectWriter()
        for (key, value) in fields { writer.node(key, value) }
        return writer.finished()
    }

    /// A canonical text of the query: equal queries have equal identifiers (the listen's identity).
    var identifier: String { String(decoding: json, as: UTF8.self) }

    private var fields: [(String, Node)] {
        var fields: [(String, Node)] = []
        if let start {
            fields.append(("sp", start.value))
            if let name = start.name { fields.append(("sn", Node(name))) }
            fields.append(("sin", Node(start.inclusive)))
        }
        if let end {
            fields.append(("ep", end.value))
            if let name = end.name { fields.append(("en", Node(name))) }
            fields.append(("ein", Node(end.inclusive)))
        }
        if let limit {
            fields.append(("l", Node(Int64(limit.count))))
            fields.append(("vf", Node(limit.fromLast ? "r" : "l")))
        }
        if let name = index.wireName { fields.append(("i", Node(name))) }
        return fields
    }

    /// The window the engine evaluates. The wire object's `null` bound values are present keys, so the
    /// fields go in as a dictionary with `Node.empty` for them (`{"ep": null}` differs from no `ep`).
    var params: QueryParams {
        var dictionary: [String: Node] = [:]
        for (key, value) in fields { dictionary[key] = value }
        return (try? QueryParams(wireFields: dictionary)) ?? QueryParams(index: index)
    }

    /// A query object as it came back from the server (a `c` push's `q`).
    static func from(wire object: Node) -> WireQuery? {
        guard object.hasChildren else { return nil }
        var query = WireQuery()
        query.index = QueryIndex(wireName: object.child(ChildKey("i")).stringValue)
        func bound(_ value: String, _ name: String, _ inclusive: String) -> Bound? {
            let children = object.children
            guard children[ChildKey(value)] != nil || object.child(ChildKey(name)).stringValue != nil else { return nil }
            return Bound(
                value: object.child(ChildKey(value)), name: object.child(ChildKey(name)).stringValue,
                inclusive: object.child(ChildKey(inclusive)).boolValue ?? true)
        }
        query.start = bound("sp", "sn", "sin")
        query.end = bound("ep", "en", "ein")
        if case .integer(let count)? = object.child(ChildKey("l")).leafValue, count >= 0, count <= Int64(QueryLimit.countMax) {
            query.limit = (Int(count), object.child(ChildKey("vf")).stringValue == "r")
        }
        return query
    }
}
