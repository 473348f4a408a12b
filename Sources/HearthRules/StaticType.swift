import HearthCore

/// What the load-time checker knows about an expression's value (docs/rules.md §7).
enum StaticType: Sendable, Equatable {
    case boolean
    case number
    case string
    case null
    /// `auth` and everything reached from it: any JSON value, checked when used.
    case any
    /// `val()`, `getPriority()`, `query.startAt`, ...: a string, number, boolean, null (or the
    /// opaque object of a non-leaf `val()`), checked when used.
    case primitive
    case snapshot
    /// The `query` variable itself (only its members are values).
    case query
    case regex
    case array

    var name: String {
        switch self {
        case .boolean: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .null: return "null"
        case .any: return "any"
        case .primitive: return "primitive"
        case .snapshot: return "RuleDataSnapshot"
        case .query: return "query"
        case .regex: return "regular expression"
        case .array: return "array"
        }
    }

    /// True for types whose values can be compared, added or passed around.
    var isValue: Bool {
        switch self {
        case .snapshot, .query, .regex, .array: return false
        default: return true
        }
    }

    /// True when a value of this type may be a string at runtime.
    var mayBeString: Bool { self == .string || self == .any || self == .primitive }

    /// True when a value of this type may be a number at runtime.
    var mayBeNumber: Bool { self == .number || self == .any || self == .primitive }
}

/// What a compiled expression is: its static type and how to evaluate it.
///
/// Snapshot-typed expressions have two more evaluators: `snapshot` builds the whole
/// `RuleSnapshot` (needed only when `parent()` must climb), `node` just finds the node, which is
/// all `val()`, `exists()`, `child()` and the other methods need. Most rules never build a
/// snapshot at all.
struct Compiled {
    var type: StaticType
    var evaluate: Evaluator
    var snapshot: SnapshotEvaluator?
    var node: NodeEvaluator?

    init(_ type: StaticType, _ evaluate: @escaping Evaluator) {
        self.type = type
        self.evaluate = evaluate
    }

    init(snapshot: @escaping SnapshotEvaluator, node: @escaping NodeEvaluator) {
        type = .snapshot
        self.snapshot = snapshot
        self.node = node
        evaluate = { (context: inout EvaluationContext) throws(RuleFailure) -> RuleValue in .snapshot(try snapshot(&context)) }
    }
}

typealias SnapshotEvaluator = @Sendable (inout EvaluationContext) throws(RuleFailure) -> RuleSnapshot
typealias NodeEvaluator = @Sendable (inout EvaluationContext) throws(RuleFailure) -> TreeView
