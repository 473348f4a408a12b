public import HearthCore

/// What the `query` variable of a `.read` rule describes (docs/rules.md §6.6).
///
/// A plain read (no query) orders by key and has no bounds or limits. Build one from the wire's
/// `QueryParams` with `init(_:)`; the realtime wire sends no index for priority order, so, as
/// Firebase documents ("default order by key"), a query without an index counts as ordered by key
/// unless `orderedByPriority` says the client asked for priority order explicitly (REST
/// `orderBy="$priority"`).
public struct RuleQuery: Sendable, Hashable {
    public enum Order: Sendable, Hashable {
        case key
        case value
        case priority
        /// `orderByChild`, with the child path as the client wrote it (`"address/zip"`).
        case child(String)
    }

    public var order: Order
    public var startAt: Node?
    public var endAt: Node?
    public var equalTo: Node?
    public var limitToFirst: Int?
    public var limitToLast: Int?

    public init(
        order: Order = .key, startAt: Node? = nil, endAt: Node? = nil, equalTo: Node? = nil,
        limitToFirst: Int? = nil, limitToLast: Int? = nil
    ) {
        self.order = order
        self.startAt = startAt
        self.endAt = endAt
        self.equalTo = equalTo
        self.limitToFirst = limitToFirst
        self.limitToLast = limitToLast
    }

    /// A plain read: ordered by key, nothing else.
    public static let plainRead = RuleQuery()

    /// The rule view of wire query parameters. A range whose two ends are the same inclusive bound
    /// is `equalTo` (that is how clients send `equalTo`).
    public init(_ params: QueryParams, orderedByPriority: Bool = false) {
        switch params.index {
        case .priority: order = orderedByPriority ? .priority : .key
        case .key: order = .key
        case .value: order = .value
        case .child(let path): order = .child(path.description)
        }
        if let start = params.start, let end = params.end, start.value == end.value, start.inclusive, end.inclusive {
            equalTo = start.value
        } else {
            startAt = params.start?.value
            endAt = params.end?.value
        }
        switch params.limit?.anchor {
        case .first?: limitToFirst = params.limit?.count
        case .last?: limitToLast = params.limit?.count
        case nil: break
        }
    }

    /// The value of `query.<member>`, or nil for a member that does not exist.
    static func memberType(_ name: String) -> StaticType? {
        switch name {
        case "orderByKey", "orderByValue", "orderByPriority": return .boolean
        case "orderByChild", "startAt", "endAt", "equalTo", "limitToFirst", "limitToLast": return .primitive
        default: return nil
        }
    }

    func member(_ name: String) -> RuleValue {
        func leaf(_ node: Node?) -> RuleValue {
            guard let node else { return .null }
            return RuleValue(node: node)
        }
        switch name {
        case "orderByKey": return .bool(order == .key)
        case "orderByValue": return .bool(order == .value)
        case "orderByPriority": return .bool(order == .priority)
        case "orderByChild":
            if case .child(let path) = order { return .string(path) }
            return .null
        case "startAt": return leaf(startAt)
        case "endAt": return leaf(endAt)
        case "equalTo": return leaf(equalTo)
        case "limitToFirst": return limitToFirst.map { .number(Double($0)) } ?? .null
        case "limitToLast": return limitToLast.map { .number(Double($0)) } ?? .null
        default: return .null
        }
    }
}
