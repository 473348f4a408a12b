/// A type as written after `is`, `extends` or `:`: a name, a generic instantiation or a union.
indirect enum TypeExpression: Hashable, Sendable, CustomStringConvertible {
    case simple(String)
    /// `Name<A, B>`; `T[]` is parsed as `Map<String, T>`.
    case generic(String, [TypeExpression])
    case union([TypeExpression])

    /// The printed form, `Map<String, Number> | Null`: also the key validators are memoised under.
    var description: String {
        switch self {
        case .simple(let name): name
        case .generic(let name, let parameters): name + "<" + parameters.map(\.description).joined(separator: ", ") + ">"
        case .union(let parts): parts.map(\.description).joined(separator: " | ")
        }
    }

    /// Replaces generic parameter names by the types bound to them.
    func substituting(_ bindings: [String: TypeExpression]) -> TypeExpression {
        switch self {
        case .simple(let name): bindings[name] ?? self
        case .generic(let name, let parameters): .generic(name, parameters.map { $0.substituting(bindings) })
        case .union(let parts): .union(parts.map { $0.substituting(bindings) })
        }
    }
}

/// A method of a type or path (`validate() { ... }`) or a global function: parameters and body.
struct Method: Hashable, Sendable {
    var name: String
    var parameters: [String]
    var body: Expression
    var location: SourceLocation?
}

/// Methods in declaration order, looked up by name.
struct MethodTable: Hashable, Sendable {
    private(set) var methods: [Method] = []

    subscript(name: String) -> Method? { methods.first { $0.name == name } }

    var names: [String] { methods.map(\.name) }

    mutating func add(_ method: Method) { methods.append(method) }
}

/// A `type` statement.
struct Schema: Sendable {
    var name: String
    var derivedFrom: TypeExpression
    /// Properties in declaration order; names may be wildcards (`$key`).
    var properties: [(name: String, type: TypeExpression, location: SourceLocation?)]
    var methods: MethodTable
    /// Generic parameter names (`type Pair<X, Y>`); empty for a plain type.
    var parameters: [String]
    var location: SourceLocation?

    var isGeneric: Bool { !parameters.isEmpty }
}

/// One segment of a path template: its key in the rules (`users` or `$uid`) and, for a capture, the
/// variable expressions use for it (`uid`).
struct PathPart: Hashable, Sendable {
    var label: String
    var variable: String?
}

/// A `path` statement, with nested statements already flattened to full templates.
struct PathStatement: Hashable, Sendable {
    var parts: [PathPart]
    var type: TypeExpression
    var methods: MethodTable
    var location: SourceLocation?

    var labels: [String] { parts.map(\.label) }

    /// Capture variables bound to their `$label` literals: `uid` → `$uid`.
    var scope: [String: Expression] {
        var scope: [String: Expression] = [:]
        for part in parts {
            if let variable = part.variable { scope[variable] = .literal(part.label) }
        }
        return scope
    }
}

/// Everything a Bolt file declares.
struct BoltProgram: Sendable {
    var functions: [String: Method] = [:]
    var schemas: [String: Schema] = [:]
    /// Schema names in declaration order (for deterministic checks and warnings).
    var schemaOrder: [String] = []
    var paths: [PathStatement] = []
}
