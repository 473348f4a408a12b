/// A Bolt expression: the body of a function or method, and every rule term the generator builds.
///
/// Expressions are immutable values. Partial evaluation returns new trees; `isSnapshot` marks an
/// expression that evaluates to a data snapshot (`newData`, `data.child('x')`) rather than a value, so the
/// generator knows where to insert `.val()` (see bolt.md §6.3).
struct Expression: Hashable, Sendable {
    indirect enum Node: Hashable, Sendable {
        case boolean(Bool)
        case number(Double)
        case string(String)
        /// A regular expression literal: the body between the slashes, verbatim, and its flags (`""` or `"i"`).
        case regularExpression(body: String, flags: String)
        case null
        case array([Expression])
        /// A name resolved during evaluation (a parameter, `this`, `root`, a function) or, if it resolves to
        /// nothing, printed as written (`auth`, `now`).
        case variable(String)
        /// Text printed verbatim and never resolved, such as the capture `$uid` or the map key `$key1`.
        case literal(String)
        /// `base.name` (accessor is a string) or `base[accessor]`.
        case reference(base: Expression, accessor: Expression)
        case call(callee: Expression, arguments: [Expression])
        case unary(UnaryOperator, Expression)
        case binary(BinaryOperator, Expression, Expression)
        case conditional(Expression, Expression, Expression)
    }

    var node: Node {
        didSet { height = node.height }
    }
    /// Levels in the tree, 1 for a leaf: bounded by ``BoltLimits/expressionHeightMax``.
    private(set) var height: Int
    /// True when the expression denotes a snapshot, false for a plain value.
    var isSnapshot: Bool
    /// Where the expression was written, kept on calls so evaluation errors can point at them.
    var location: SourceLocation?

    init(_ node: Node, isSnapshot: Bool = false, location: SourceLocation? = nil) {
        self.node = node
        self.height = node.height
        self.isSnapshot = isSnapshot
        self.location = location
    }
}

enum UnaryOperator: Hashable, Sendable {
    case negate
    case not

    var symbol: String { self == .negate ? "-" : "!" }
}

enum BinaryOperator: Hashable, Sendable {
    case multiply, divide, remainder
    case add, subtract
    case less, lessOrEqual, greater, greaterOrEqual
    case equal, notEqual
    case and, or

    var symbol: String {
        switch self {
        case .multiply: "*"
        case .divide: "/"
        case .remainder: "%"
        case .add: "+"
        case .subtract: "-"
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        case .equal: "=="
        case .notEqual: "!="
        case .and: "&&"
        case .or: "||"
        }
    }

    /// JavaScript's operator precedence, which both Bolt and the rules language use.
    var precedence: Int {
        switch self {
        case .multiply, .divide, .remainder: 14
        case .add, .subtract: 13
        case .less, .lessOrEqual, .greater, .greaterOrEqual: 11
        case .equal, .notEqual: 10
        case .and: 6
        case .or: 5
        }
    }
}

extension Expression.Node {
    fileprivate var height: Int {
        switch self {
        case .array(let elements): 1 + (elements.map(\.height).max() ?? 0)
        case .reference(let base, let accessor): 1 + max(base.height, accessor.height)
        case .call(let callee, let arguments): 1 + max(callee.height, arguments.map(\.height).max() ?? 0)
        case .unary(_, let operand): 1 + operand.height
        case .binary(_, let left, let right): 1 + max(left.height, right.height)
        case .conditional(let a, let b, let c): 1 + max(a.height, b.height, c.height)
        default: 1
        }
    }
}

// MARK: - Builders

extension Expression {
    static let `true` = Expression(.boolean(true))
    static let `false` = Expression(.boolean(false))

    static func variable(_ name: String, isSnapshot: Bool = false) -> Expression {
        Expression(.variable(name), isSnapshot: isSnapshot)
    }

    static func string(_ value: String) -> Expression { Expression(.string(value)) }

    static func literal(_ text: String) -> Expression { Expression(.literal(text)) }

    /// `base.name`, the form the parser gives `a.b` and `a['b']`.
    static func member(_ base: Expression, _ name: String) -> Expression {
        Expression(.reference(base: base, accessor: .string(name)))
    }

    static func call(_ callee: Expression, _ arguments: [Expression] = [], location: SourceLocation? = nil) -> Expression {
        Expression(.call(callee: callee, arguments: arguments), location: location)
    }

    static func binary(_ op: BinaryOperator, _ left: Expression, _ right: Expression) -> Expression {
        Expression(.binary(op, left, right))
    }

    /// The same expression marked as a snapshot (or as a value).
    func cast(snapshot: Bool) -> Expression {
        var copy = self
        copy.isSnapshot = snapshot
        return copy
    }

    /// `snapshot.val()` for a snapshot; a value is returned unchanged.
    var ensuringValue: Expression {
        guard isSnapshot else { return self }
        return .call(.member(cast(snapshot: false), "val"))
    }

    /// The expression in a boolean context: a snapshot's value is compared with `true`, because the rules
    /// language only accepts booleans in `&&`, `||`, `!`, `?:` and as a whole rule.
    var ensuringBoolean: Expression {
        let value = ensuringValue
        if value.isMethodCall(named: "val") {
            return .binary(.equal, value, .true)
        }
        return value
    }

    /// True for `x.name(...)` where the accessor is the string `name`.
    func isMethodCall(named name: String) -> Bool {
        guard case .call(let callee, _) = node, case .reference(_, let accessor) = callee.node,
            case .string(let accessorName) = accessor.node
        else { return false }
        return accessorName == name
    }

    /// The called name: a plain function's name, or a method's name for `x.name(...)`; `nil` otherwise.
    var calledName: String? {
        guard case .call(let callee, _) = node else { return nil }
        switch callee.node {
        case .variable(let name): return name
        case .reference(_, let accessor):
            if case .string(let name) = accessor.node { return name }
            return ""
        default: return nil
        }
    }

    /// The string value of a string literal.
    var stringValue: String? {
        if case .string(let value) = node { return value }
        return nil
    }
}

// MARK: - AND / OR lists

extension Expression {
    /// `terms[0] && terms[1] && ...`, left-associated, with nested `&&` flattened, `true` terms dropped and
    /// any `false` term making the whole list `false`. An empty list is `true`.
    static func and(_ terms: [Expression]) -> Expression { associate(.and, terms, identity: true) }

    /// `terms[0] || terms[1] || ...`, the dual of ``and(_:)``: `false` terms dropped, `true` wins, empty is `false`.
    static func or(_ terms: [Expression]) -> Expression { associate(.or, terms, identity: false) }

    private static func associate(_ op: BinaryOperator, _ terms: [Expression], identity: Bool) -> Expression {
        var flat: [Expression] = []
        for term in terms { term.flatten(op, into: &flat) }
        var kept: [Expression] = []
        for term in flat {
            if case .boolean(let value) = term.node {
                if value == identity { continue }
                return Expression(.boolean(!identity))
            }
            kept.append(term)
        }
        guard var result = kept.first else { return Expression(.boolean(identity)) }
        for term in kept.dropFirst() {
            result = .binary(op, result, term)
        }
        return result
    }

    private func flatten(_ op: BinaryOperator, into flat: inout [Expression]) {
        if case .binary(op, let left, let right) = node {
            left.flatten(op, into: &flat)
            right.flatten(op, into: &flat)
        } else {
            flat.append(self)
        }
    }
}
