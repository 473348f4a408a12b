import HearthCore

/// A value while a rule runs (docs/rules.md §5.3).
enum RuleValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    /// A node with children: a claim map of `auth`, or the opaque value `val()` gives for a
    /// non-leaf node. Never equal to anything.
    case object(Node)
    /// What `val()` gives for a node with children. Never equal to anything; the checker allows
    /// no member access on `val()`, so its children are never needed.
    case opaqueObject
    case snapshot(RuleSnapshot)

    /// The rule value of a stored node: its leaf value, an object, or null.
    init(node: Node) {
        if let number = node.numberValue {
            self = .number(number)
        } else if let string = node.stringValue {
            self = .string(string)
        } else if let bool = node.boolValue {
            self = .bool(bool)
        } else if node.hasChildren {
            self = .object(node)
        } else {
            self = .null
        }
    }

    /// A short type name for runtime error messages.
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .object, .opaqueObject: return "object"
        case .snapshot: return "snapshot"
        }
    }

    /// `==` (and `===`): same type and value, no conversions; objects equal nothing (docs/rules.md §5.3, §15).
    static func strictlyEqual(_ a: RuleValue, _ b: RuleValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        default: return false
        }
    }
}
