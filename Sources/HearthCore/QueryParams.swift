/// What a query orders by (docs/protocol.md §2.4 `i`, §5.6).
public enum QueryIndex: Hashable, Sendable, CustomStringConvertible {
    /// Priority order: the default when a query names no index.
    case priority
    case key
    case value
    /// A descendant of each child, `orderByChild("a/b")`.
    case child(Path)

    /// The wire spelling (`i`): absent for priority, `.key`, `.value`, or the child path.
    public var wireName: String? {
        switch self {
        case .priority: return nil
        case .key: return ".key"
        case .value: return ".value"
        case .child(let path): return path.description
        }
    }

    public init(wireName: String?) {
        switch wireName {
        case nil, ".priority": self = .priority
        case ".key": self = .key
        case ".value": self = .value
        case let name?: self = .child(Path(name))
        }
    }

    public var description: String { wireName ?? ".priority" }

    /// The value this index orders a child by (the key index orders by key alone: empty here).
    @inlinable
    public func indexValue(of child: Node) -> Node {
        switch self {
        case .priority: return child.priority?.node ?? .empty
        case .key: return .empty
        case .value: return child.unprioritized
        case .child(let path): return child.child(at: path).unprioritized
        }
    }
}

/// A key-name bound in a query position: the sentinels or a real key (docs/protocol.md §2.4).
public enum BoundName: Hashable, Sendable {
    /// `[MIN_NAME]`: below every key.
    case min
    /// `[MAX_NAME]` or `[MAX_KEY]`: above every key.
    case max
    case key(ChildKey)

    public init(wire: String) {
        switch wire {
        case "[MIN_NAME]": self = .min
        case "[MAX_NAME]", "[MAX_KEY]": self = .max
        default: self = .key(ChildKey(wire))
        }
    }

    /// Three-way comparison of a real key against this bound.
    @inlinable
    func compare(key: ChildKey) -> Int {
        switch self {
        case .min: return 1
        case .max: return -1
        case .key(let bound): return KeyOrder.compare(key.string, bound.string)
        }
    }
}

/// One end of a query range: an index value, a key name for ties, and whether it is inclusive.
public struct QueryBound: Hashable, Sendable {
    public var value: Node
    public var name: BoundName
    public var inclusive: Bool

    public init(value: Node, name: BoundName, inclusive: Bool = true) {
        self.value = value
        self.name = name
        self.inclusive = inclusive
    }
}

/// How a query limits its window.
public struct QueryLimit: Hashable, Sendable {
    public enum Anchor: Hashable, Sendable {
        /// `limitToFirst` (`vf: "l"`).
        case first
        /// `limitToLast` (`vf: "r"`).
        case last
    }
    public var count: Int
    public var anchor: Anchor

    /// Largest limit a query may ask for: the JS SDK sends limits as 32-bit integers, and a larger
    /// window could never be filled anyway.
    public static let countMax = Int(Int32.max)

    public init(count: Int, anchor: Anchor) {
        self.count = count
        self.anchor = anchor
    }
}

/// The parameters of a query: index, range and limit (docs/protocol.md §2.4, §5.7).
///
///     // orderByChild("score").limitToLast(3)
///     QueryParams(index: .child("score"), limit: QueryLimit(count: 3, anchor: .last))
public struct QueryParams: Hashable, Sendable {
    public var index: QueryIndex
    public var start: QueryBound?
    public var end: QueryBound?
    public var limit: QueryLimit?

    public init(index: QueryIndex = .priority, start: QueryBound? = nil, end: QueryBound? = nil, limit: QueryLimit? = nil) {
        self.index = index
        self.start = start
        self.end = end
        self.limit = limit
    }

    /// The default query: everything at the location, in priority order.
    public static let all = QueryParams()

    /// True when the query selects every child (no range, no limit): clients send such listens
    /// untagged whatever their order.
    public var loadsAllData: Bool { start == nil && end == nil && limit == nil }

    /// Reads a wire query object (`q` of a listen): `sp`/`sn`/`sin`, `ep`/`en`/`ein`, `l`/`vf`, `i`.
    ///
    /// `fields` holds every key present in the object; a key present with JSON `null` maps to
    /// `Node.empty`. Presence matters: `{"ep": null}` (`endAt(null)`) admits only children whose
    /// index value is null, while no `ep` admits everything.
    public init(wireFields fields: [String: Node]) throws(DataError) {
        func bound(value: String, name: String, inclusive: String, defaultName: BoundName) throws(DataError) -> QueryBound? {
            guard let boundValue = fields[value] else { return nil }
            if boundValue.hasChildren { throw DataError(.invalidQuery, "Query bound '\(value)' must be a leaf or null.") }
            let boundName: BoundName
            switch fields[name] {
            case nil, Node.empty?: boundName = defaultName
            case let nameNode?:
                guard let string = nameNode.stringValue else {
                    throw DataError(.invalidQuery, "Query key name '\(name)' must be a string.")
                }
                boundName = BoundName(wire: string)
            }
            let flag = fields[inclusive] ?? .empty
            if !flag.isEmpty && flag.boolValue == nil {
                throw DataError(.invalidQuery, "Query flag '\(inclusive)' must be a boolean.")
            }
            return QueryBound(value: boundValue, name: boundName, inclusive: flag.boolValue ?? true)
        }

        let indexNode = fields["i"] ?? .empty
        if !indexNode.isEmpty && indexNode.stringValue == nil {
            throw DataError(.invalidQuery, "Query index 'i' must be a string.")
        }
        index = QueryIndex(wireName: indexNode.stringValue)
        start = try bound(value: "sp", name: "sn", inclusive: "sin", defaultName: .min)
        end = try bound(value: "ep", name: "en", inclusive: "ein", defaultName: .max)
        let limitNode = fields["l"] ?? .empty
        if limitNode.isEmpty {
            limit = nil
        } else {
            guard case .integer(let count) = limitNode.storage, count >= 0 else {
                throw DataError(.invalidQuery, "Query limit 'l' must be a non-negative integer.")
            }
            guard count <= Int64(QueryLimit.countMax) else {
                throw DataError(.invalidQuery, "Query limit 'l' must be at most \(QueryLimit.countMax).")
            }
            let anchor: QueryLimit.Anchor = fields["vf"]?.stringValue == "r" ? .last : .first
            limit = QueryLimit(count: Int(count), anchor: anchor)
        }
    }

    /// Reads a wire query object already parsed into a node (JSON nulls are gone: use
    /// `init(wireFields:)` where `sp: null` / `ep: null` can occur).
    public init(wire object: Node) throws(DataError) {
        var fields: [String: Node] = [:]
        object.children.forEach { key, value in
            fields[key.string] = value
            return true
        }
        try self.init(wireFields: fields)
    }
}
