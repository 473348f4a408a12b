public import HearthCore

/// One node of the rules tree: the rule properties at a level and the levels below it (docs/rules.md §1).
final class RuleNode: Sendable {
    /// Where this node sits, with wildcards as written: `/rooms/$room`.
    let pattern: String
    let read: CompiledRule?
    let write: CompiledRule?
    let validate: CompiledRule?
    let indexOn: [String]
    /// Literal children in key order. Rules levels have few children, and `ChildKey` equality
    /// compares order words before strings, so a scan beats hashing the key.
    let children: [(key: ChildKey, node: RuleNode)]
    /// The `$name` child, if any, and its name (with the `$`).
    let wildcardName: String?
    let wildcard: RuleNode?

    init(
        pattern: String, read: CompiledRule?, write: CompiledRule?, validate: CompiledRule?, indexOn: [String],
        children: [ChildKey: RuleNode], wildcardName: String?, wildcard: RuleNode?
    ) {
        let sorted = children.sorted { $0.key < $1.key }.map { (key: $0.key, node: $0.value) }
        self.pattern = pattern
        self.read = read
        self.write = write
        self.validate = validate
        self.indexOn = indexOn
        self.children = sorted
        self.wildcardName = wildcardName
        self.wildcard = wildcard
    }

    /// The literal child named `key`.
    @inline(__always)
    func child(_ key: ChildKey) -> RuleNode? {
        for entry in children where entry.key == key { return entry.node }
        return nil
    }

    /// True when some rule node lies below this one.
    var hasChildRules: Bool { wildcard != nil || !children.isEmpty }

    /// True when this node or one below it has a `.validate` rule.
    var hasValidation: Bool {
        validate != nil || wildcard?.hasValidation == true || children.contains { $0.node.hasValidation }
    }
}

/// A rule property compiled: its source for messages and its evaluator.
struct CompiledRule: Sendable {
    let kind: RuleKind
    /// The expression as written, or `true` / `false` for boolean rules.
    let expression: String
    let evaluate: Evaluator

    /// True for `true`, written as a boolean or as the expression `"true"`: it grants without looking.
    var isConstantlyTrue: Bool {
        expression.utf8.elementsEqual("true".utf8)
            || expression.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).elementsEqual(["true"])
    }
}

/// Builds the rules tree from the rules document, compiling every expression (docs/rules.md §1, §7).
struct RuleTreeLoader {
    private(set) var indexes: [RuleIndex] = []

    mutating func load(_ document: RulesJSON) throws(RulesError) -> RuleNode {
        guard case .object(let members) = document.kind else {
            throw RulesError(at: document.position, "The rules document must be a JSON object with a 'rules' key.")
        }
        guard let rules = members.first(where: { $0.key == "rules" }) else {
            throw RulesError(at: document.position, "The rules document must have a top-level 'rules' key.")
        }
        if let other = members.first(where: { $0.key != "rules" }) {
            throw RulesError(
                at: other.keyPosition, "Unknown top-level key '\(other.key)': only 'rules' is allowed.", text: other.key)
        }
        return try node(rules.value, keys: [], captures: [], nameForErrors: "rules")
    }

    private mutating func node(
        _ json: RulesJSON, keys: [String], captures: [String], nameForErrors: String
    ) throws(RulesError) -> RuleNode {
        guard case .object(let members) = json.kind else {
            throw RulesError(
                at: json.position, "'\(nameForErrors)' must be an object of rules, not \(json.typeName).", text: nameForErrors)
        }
        if keys.count > Limits.pathDepthMax {
            throw RulesError(at: json.position, "Rules nest deeper than the \(Limits.pathDepthMax) levels a path can have.")
        }
        let pattern = "/" + keys.joined(separator: "/")
        var read: CompiledRule?, write: CompiledRule?, validate: CompiledRule?
        var indexOn: [String] = []
        var children: [ChildKey: RuleNode] = [:]
        var wildcardName: String?, wildcard: RuleNode?
        for member in members {
            let key = member.key
            if key.hasPrefix(".") {
                switch key {
                case ".read": read = try compileRule(member, .read, captures: captures)
                case ".write": write = try compileRule(member, .write, captures: captures)
                case ".validate": validate = try compileRule(member, .validate, captures: captures)
                case ".indexOn":
                    indexOn = try indexList(member)
                    indexes.append(RuleIndex(pattern: Path(keys.map { ChildKey($0) }), children: indexOn))
                default:
                    throw RulesError(
                        at: member.keyPosition,
                        "Unknown rule property '\(key)': only .read, .write, .validate and .indexOn are allowed.", text: key)
                }
            } else if key.hasPrefix("$") {
                try checkWildcardName(member)
                if let existing = wildcardName {
                    throw RulesError(
                        at: member.keyPosition, "Two wildcards at one level ('\(existing)' and '\(key)'): only one is allowed.", text: key)
                }
                if captures.contains(key) {
                    throw RulesError(
                        at: member.keyPosition, "Wildcard '\(key)' is already bound above this level.", text: key)
                }
                wildcardName = key
                wildcard = try node(member.value, keys: keys + [key], captures: captures + [key], nameForErrors: key)
            } else {
                do {
                    try KeyValidation.validate(ChildKey(key))
                } catch {
                    throw RulesError(at: member.keyPosition, "Invalid key '\(key)' in rules: \(error.message)", text: key)
                }
                children[ChildKey(key)] = try node(member.value, keys: keys + [key], captures: captures, nameForErrors: key)
            }
        }
        return RuleNode(
            pattern: pattern, read: read, write: write, validate: validate, indexOn: indexOn, children: children,
            wildcardName: wildcardName, wildcard: wildcard)
    }

    private func checkWildcardName(_ member: RulesJSON.Member) throws(RulesError) {
        let name = member.key.unicodeScalars.dropFirst()
        let valid = !name.isEmpty && name.allSatisfy { Lexer.isIdentifierStart($0) || ("0"..."9").contains($0) }
        if !valid {
            throw RulesError(
                at: member.keyPosition, "Invalid wildcard '\(member.key)': use $ followed by letters, digits or _.", text: member.key)
        }
    }

    private func indexList(_ member: RulesJSON.Member) throws(RulesError) -> [String] {
        func name(_ json: RulesJSON) throws(RulesError) -> String {
            guard case .string(let value, _) = json.kind, !value.isEmpty else {
                throw RulesError(at: json.position, ".indexOn entries must be non-empty strings (child paths or \".value\").")
            }
            return value
        }
        switch member.value.kind {
        case .string: return [try name(member.value)]
        case .array(let elements):
            var names: [String] = []
            for element in elements { names.append(try name(element)) }
            return names
        default:
            throw RulesError(
                at: member.value.position, ".indexOn must be a string or an array of strings, not \(member.value.typeName).",
                text: ".indexOn")
        }
    }

    private func compileRule(_ member: RulesJSON.Member, _ kind: RuleKind, captures: [String]) throws(RulesError) -> CompiledRule {
        switch member.value.kind {
        case .bool(let value):
            return CompiledRule(kind: kind, expression: value ? "true" : "false") { _ in .bool(value) }
        case .string(let text, let positions):
            let scalars = Array(text.unicodeScalars)
            do {
                let expression = try Parser.parse(scalars)
                let evaluate = try ExpressionCompiler(kind: kind, captures: captures).compileRule(expression)
                return CompiledRule(kind: kind, expression: text, evaluate: evaluate)
            } catch {
                let position = positions[min(max(error.offset, 0), positions.count - 1)]
                throw RulesError(
                    at: position, "\(error.message) (in \(kind.rawValue): \(text))", text: error.text.isEmpty ? text : error.text)
            }
        default:
            throw RulesError(
                at: member.value.position, "\(kind.rawValue) must be a boolean or a string expression, not \(member.value.typeName).",
                text: member.key)
        }
    }
}

/// An `.indexOn` declaration: the children of every location matching `pattern` are to be
/// indexed by each entry of `children` (a child path, or `.value` for ordering by value).
///
/// `pattern` keys that start with `$` are wildcards (`/users/$uid/posts`): stored keys can never
/// contain `$`, so they cannot be mistaken for literal keys.
public struct RuleIndex: Sendable, Hashable {
    public let pattern: Path
    public let children: [String]

    /// True when `path` matches `pattern`, each `$` key standing for any one key.
    public func matches(_ path: Path) -> Bool {
        guard path.count == pattern.count else { return false }
        for (p, k) in zip(pattern.keys, path.keys) where !p.string.hasPrefix("$") && p != k { return false }
        return true
    }

    /// The query index each entry stands for: `.value`, or a child path.
    public var queryIndexes: [QueryIndex] {
        children.map { $0 == ".value" ? QueryIndex.value : QueryIndex.child(Path($0)) }
    }
}
