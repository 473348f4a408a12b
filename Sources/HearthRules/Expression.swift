/// The syntax tree of one rule expression. `offset` is where the node starts in the expression
/// (in Unicode scalars), for error positions.
indirect enum Expression: Sendable {
    case null(offset: Int)
    case boolean(Bool, offset: Int)
    case number(Double, offset: Int)
    case string(String, offset: Int)
    case regex(pattern: String, flags: String, offset: Int)
    case array([Expression], offset: Int)
    case variable(String, offset: Int)
    /// `object.name`
    case member(Expression, name: String, offset: Int)
    /// `object[key]`
    case index(Expression, key: Expression, offset: Int)
    case call(Expression, arguments: [Expression], offset: Int)
    case unary(UnaryOperator, Expression, offset: Int)
    case binary(BinaryOperator, Expression, Expression, offset: Int)
    case conditional(Expression, Expression, Expression, offset: Int)

    /// Levels of the tree: how deep compiling and evaluating it recurse.
    var height: Int {
        switch self {
        case .null, .boolean, .number, .string, .regex, .variable: return 1
        case .array(let items, _): return 1 + (items.map(\.height).max() ?? 0)
        case .member(let o, _, _): return 1 + o.height
        case .index(let o, let k, _): return 1 + max(o.height, k.height)
        case .call(let c, let args, _): return 1 + max(c.height, args.map(\.height).max() ?? 0)
        case .unary(_, let x, _): return 1 + x.height
        case .binary(_, let a, let b, _): return 1 + max(a.height, b.height)
        case .conditional(let c, let a, let b, _): return 1 + max(c.height, a.height, b.height)
        }
    }

    var offset: Int {
        switch self {
        case .null(let o), .boolean(_, let o), .number(_, let o), .string(_, let o), .regex(_, _, let o),
            .array(_, let o), .variable(_, let o), .member(_, _, let o), .index(_, _, let o), .call(_, _, let o),
            .unary(_, _, let o), .binary(_, _, _, let o), .conditional(_, _, _, let o):
            return o
        }
    }
}

enum UnaryOperator: String, Sendable {
    case not = "!"
    case negate = "-"
}

enum BinaryOperator: String, Sendable {
    case multiply = "*", divide = "/", remainder = "%"
    case add = "+", subtract = "-"
    case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case equal = "==", notEqual = "!="
    case and = "&&", or = "||"

    /// Binding strength (docs/rules.md §5.2): higher binds tighter.
    var precedence: Int {
        switch self {
        case .multiply, .divide, .remainder: return 7
        case .add, .subtract: return 6
        case .less, .lessOrEqual, .greater, .greaterOrEqual: return 5
        case .equal, .notEqual: return 4
        case .and: return 3
        case .or: return 2
        }
    }

    /// The operator a symbol token stands for; `===` and `!==` are `==` and `!=` (docs/rules.md §5.2).
    init?(symbol: String) {
        switch symbol {
        case "===": self = .equal
        case "!==": self = .notEqual
        default: self.init(rawValue: symbol)
        }
    }
}
