/// The kinds of events a listener receives, in the order Firebase raises them for one change
/// (removed, added, moved, changed, then value).
public enum EventType: String, Sendable, CaseIterable, Comparable {
    case childRemoved = "child_removed"
    case childAdded = "child_added"
    case childMoved = "child_moved"
    case childChanged = "child_changed"
    case value = "value"

    var raiseOrder: Int {
        switch self {
        case .childRemoved: return 0
        case .childAdded: return 1
        case .childMoved: return 2
        case .childChanged: return 3
        case .value: return 4
        }
    }

    public static func < (lhs: EventType, rhs: EventType) -> Bool { lhs.raiseOrder < rhs.raiseOrder }
}

/// One event for one listener: what changed and, for child events, the key of the child now
/// before it in the query's order (`previousKey`, nil when first; absent for `childRemoved`).
public struct Event: Sendable, Equatable, CustomStringConvertible {
    public var type: EventType
    /// The child's key for child events; nil for `value`.
    public var key: ChildKey?
    /// The child's node (its old node for `childRemoved`), or the whole view for `value`.
    public var node: Node
    public var previousKey: ChildKey?

    public init(type: EventType, key: ChildKey? = nil, node: Node, previousKey: ChildKey? = nil) {
        self.type = type
        self.key = key
        self.node = node
        self.previousKey = previousKey
    }

    public var description: String {
        var text = type.rawValue
        if let key { text += " \(key)" }
        if let previousKey { text += " after \(previousKey)" }
        return text
    }
}
