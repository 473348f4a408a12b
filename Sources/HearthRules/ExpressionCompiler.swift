import HearthCore

/// Type-checks an expression (docs/rules.md §7) and compiles it into nested closures, once, at load time.
///
/// Every check Firebase makes when rules are deployed happens here and throws an
/// `ExpressionError`; what can only be known with data (a claim's type, a missing value) is
/// checked inside the closures, which throw `RuleFailure` so the rule counts as false (docs/rules.md §8).
struct ExpressionCompiler {
    /// Which rule property the expression belongs to: `newData` is not defined in `.read`, `query`
    /// only there.
    let kind: RuleKind
    /// `$` names in scope, outermost first; a capture's slot is its index here.
    let captures: [String]

    /// Compiles a whole rule, which must be boolean (docs/rules.md §5.4).
    func compileRule(_ expression: Expression) throws(ExpressionError) -> Evaluator {
        let compiled = try compile(expression)
        guard compiled.type == .boolean else {
            throw ExpressionError(
                offset: 0, "The rule must evaluate to a boolean, but this expression is a \(compiled.type.name).")
        }
        return compiled.evaluate
    }

    func compile(_ expression: Expression) throws(ExpressionError) -> Compiled {
        switch expression {
        case .null: return Compiled(.null) { _ in .null }
        case .boolean(let value, _): return Compiled(.boolean) { _ in .bool(value) }
        case .number(let value, _): return Compiled(.number) { _ in .number(value) }
        case .string(let value, _): return Compiled(.string) { _ in .string(value) }
        case .regex(_, _, let offset):
            throw ExpressionError(offset: offset, "A regular expression literal is only allowed as the argument of matches().")
        case .array(_, let offset):
            throw ExpressionError(offset: offset, "An array literal is only allowed as the argument of hasChildren().")
        case .variable(let name, let offset): return try variable(name, offset: offset)
        case .member(let object, let name, let offset): return try property(of: try compile(object), name, offset: offset)
        case .index(let object, let key, let offset): return try index(object, key, offset: offset)
        case .call(let callee, let arguments, let offset): return try call(callee, arguments, offset: offset)
        case .unary(let op, let operand, let offset): return try unary(op, try compile(operand), offset: offset)
        case .binary(let op, let left, let right, let offset):
            return try binary(op, try compile(left), try compile(right), offset: offset, rightOffset: right.offset)
        case .conditional(let condition, let whenTrue, let whenFalse, let offset):
            return try conditional(try compile(condition), try compile(whenTrue), try compile(whenFalse), offset: offset)
        }
    }

    // MARK: Variables

    private func variable(_ name: String, offset: Int) throws(ExpressionError) -> Compiled {
        switch name {
        case "auth":
            return Compiled(.any) { context in context.auth }
        case "now":
            return Compiled(.number) { context in .number(context.now) }
        case "root":
            return Compiled(
                snapshot: { context in RuleSnapshot(tree: .node(context.root), keys: [], node: .node(context.root)) },
                node: { context in .node(context.root) })
        case "data":
            return Compiled(
                snapshot: { context in RuleSnapshot(tree: .node(context.root), keys: context.location, node: .node(context.data)) },
                node: { context in .node(context.data) })
        case "newData":
            guard kind != .read else {
                throw ExpressionError(offset: offset, "'newData' is not defined in .read rules.", text: name)
            }
            return Compiled(
                snapshot: { context in RuleSnapshot(tree: context.newRoot, keys: context.location, node: context.newData) },
                node: { context in context.newData })
        case "query":
            guard kind == .read else {
                throw ExpressionError(offset: offset, "'query' is only defined in .read rules.", text: name)
            }
            return Compiled(.query) { _ in .null }
        default:
            if name.hasPrefix("$"), let slot = captures.firstIndex(of: name) {
                return Compiled(.string) { context in .string(context.captures[slot]) }
            }
            if name.hasPrefix("$") {
                throw ExpressionError(offset: offset, "Unknown variable '\(name)': no such wildcard above this rule.", text: name)
            }
            throw ExpressionError(offset: offset, "Unknown variable '\(name)'.", text: name)
        }
    }

    // MARK: Members

    private func property(of object: Compiled, _ name: String, offset: Int) throws(ExpressionError) -> Compiled {
        switch object.type {
        case .query:
            guard RuleQuery.memberType(name) != nil else {
                throw ExpressionError(offset: offset, "Unknown query property '\(name)'.", text: name)
            }
            let type = RuleQuery.memberType(name)!
            return Compiled(type) { context in context.query.member(name) }
        case .any:
            let evaluate = object.evaluate
            return Compiled(.any) { context throws(RuleFailure) in
                try context.spend()
                return Self.member(of: try evaluate(&context), name)
            }
        case .string, .primitive:
            if name == "length" {
                let evaluate = object.evaluate
                return Compiled(object.type == .string ? .number : .primitive) { context throws(RuleFailure) in
                    try context.spend()
                    switch try evaluate(&context) {
                    case .string(let s): return .number(Double(s.utf16.count))
                    default: return .null
                    }
                }
            }
            if StringMethod(rawValue: name) != nil {
                throw ExpressionError(offset: offset, "String method '\(name)' must be called: \(name)(...).", text: name)
            }
            throw ExpressionError(offset: offset, "Unknown property '\(name)' of a \(object.type.name) value.", text: name)
        case .snapshot:
            if SnapshotMethod(rawValue: name) != nil {
                throw ExpressionError(offset: offset, "Snapshot method '\(name)' must be called: \(name)().", text: name)
            }
            throw ExpressionError(offset: offset, "No such method/property '\(name)' on a RuleDataSnapshot.", text: name)
        default:
            throw ExpressionError(offset: offset, "A \(object.type.name) value has no property '\(name)'.", text: name)
        }
    }

    /// `auth.x` at runtime: a claim of a map, `length` of a string, null otherwise (member access
    /// on null is null, docs/rules.md §5.3).
    static func member(of value: RuleValue, _ name: String) -> RuleValue {
        switch value {
        case .object(let node): return RuleValue(node: node.child(.init(name)))
        case .string(let s) where name == "length": return .number(Double(s.utf16.count))
        default: return .null
        }
    }

    private func index(_ objectExpression: Expression, _ key: Expression, offset: Int) throws(ExpressionError) -> Compiled {
        let object = try compile(objectExpression)
        switch object.type {
        case .any:
            let keyCompiled = try compile(key)
            guard keyCompiled.type.isValue else {
                throw ExpressionError(offset: key.offset, "A \(keyCompiled.type.name) cannot be used as a property name.")
            }
            let evaluate = object.evaluate, evaluateKey = keyCompiled.evaluate
            return Compiled(.any) { context throws(RuleFailure) in
                try context.spend()
                let value = try evaluate(&context)
                switch try evaluateKey(&context) {
                case .string(let name): return Self.member(of: value, name)
                case .number(let n): return Self.member(of: value, JSNumber.string(n))
                case let other: throw RuleFailure.runtime("cannot use a \(other.typeName) as a property name")
                }
            }
        case .snapshot, .string, .primitive, .query:
            guard case .string(let name, _) = key else {
                throw ExpressionError(
                    offset: key.offset, "Only a string literal may name a property of a \(object.type.name) in brackets.")
            }
            return try property(of: object, name, offset: key.offset)
        default:
            throw ExpressionError(offset: offset, "A \(object.type.name) value cannot be indexed.")
        }
    }

    // MARK: Calls

    private func call(_ callee: Expression, _ arguments: [Expression], offset: Int) throws(ExpressionError) -> Compiled {
        let objectExpression: Expression
        let name: String
        let nameOffset: Int
        switch callee {
        case .member(let object, let member, let memberOffset):
            (objectExpression, name, nameOffset) = (object, member, memberOffset)
        case .index(let object, .string(let member, let memberOffset), _):
            (objectExpression, name, nameOffset) = (object, member, memberOffset)
        case .index(_, let key, _):
            throw ExpressionError(offset: key.offset, "A method name in brackets must be a string literal.")
        default:
            throw ExpressionError(offset: callee.offset, "This expression is not a function and cannot be called.")
        }
        let object = try compile(objectExpression)
        switch object.type {
        case .snapshot:
            guard let method = SnapshotMethod(rawValue: name) else {
                throw ExpressionError(offset: nameOffset, "No such method '\(name)' on a RuleDataSnapshot.", text: name)
            }
            return try compileSnapshotMethod(method, on: object, arguments, offset: nameOffset)
        case .string, .any, .primitive:
            guard let method = StringMethod(rawValue: name) else {
                throw ExpressionError(offset: nameOffset, "No such method '\(name)': not a string method.", text: name)
            }
            return try compileStringMethod(method, on: object, arguments, offset: nameOffset)
        default:
            throw ExpressionError(offset: nameOffset, "A \(object.type.name) value has no method '\(name)'.", text: name)
        }
    }

    private func checkArity(_ name: String, _ arguments: [Expression], _ expected: Int, offset: Int) throws(ExpressionError) {
        guard arguments.count == expected else {
            throw ExpressionError(
                offset: offset, "\(name)() takes \(expected) argument\(expected == 1 ? "" : "s"), \(arguments.count) given.", text: name)
        }
    }

    /// A string argument: statically anything that may be a string (checked again at runtime).
    private func stringArgument(_ name: String, _ expression: Expression) throws(ExpressionError) -> Evaluator {
        let compiled = try compile(expression)
        guard compiled.type.mayBeString else {
            throw ExpressionError(
                offset: expression.offset, "\(name)() expects a string argument, not a \(compiled.type.name).")
        }
        return compiled.evaluate
    }

    /// `x + y`, refused past ``RulesLimits/stringResultBytesMax`` (doubling a string in a loop of rules
    /// would otherwise grow without bound).
    static func concatenate(_ x: String, _ y: String) throws(RuleFailure) -> String {
        guard x.utf8.count + y.utf8.count <= RulesLimits.stringResultBytesMax else {
            throw RuleFailure.runtime("+ would build a string over \(RulesLimits.stringResultBytesMax) bytes")
        }
        return x + y
    }

    @inline(__always)
    static func requireString(_ value: RuleValue, for name: String) throws(RuleFailure) -> String {
        guard case .string(let s) = value else {
            throw RuleFailure.runtime("\(name)() expects a string, got \(value.typeName)")
        }
        return s
    }

    private func compileSnapshotMethod(
        _ method: SnapshotMethod, on object: Compiled, _ arguments: [Expression], offset: Int
    ) throws(ExpressionError) -> Compiled {
        let snapshot = object.snapshot!, node = object.node!
        let name = method.rawValue
        switch method {
        case .val:
            try checkArity(name, arguments, 0, offset: offset)
            return Compiled(.primitive) { context throws(RuleFailure) in
                try context.spend()
                return try node(&context).ruleValue
            }
        case .child:
            try checkArity(name, arguments, 1, offset: offset)
            let path = try childPath(name, arguments[0])
            return Compiled(
                snapshot: { context throws(RuleFailure) in
                    try context.spend()
                    let base = try snapshot(&context)
                    return base.child(try path(&context))
                },
                node: { context throws(RuleFailure) in
                    try context.spend()
                    let base = try node(&context)
                    return base.descend(try path(&context))
                })
        case .parent:
            try checkArity(name, arguments, 0, offset: offset)
            let parent: SnapshotEvaluator = { context throws(RuleFailure) in
                try context.spend()
                guard let parent = try snapshot(&context).parent() else {
                    throw RuleFailure.runtime("parent() of the root")
                }
                return parent
            }
            return Compiled(snapshot: parent, node: { context throws(RuleFailure) in try parent(&context).node })
        case .hasChild:
            try checkArity(name, arguments, 1, offset: offset)
            let path = try childPath(name, arguments[0])
            return Compiled(.boolean) { context throws(RuleFailure) in
                try context.spend()
                let base = try node(&context)
                return .bool(!base.descend(try path(&context)).isEmpty)
            }
        case .hasChildren:
            if arguments.isEmpty {
                return Compiled(.boolean) { context throws(RuleFailure) in
                    try context.spend()
                    return .bool(try node(&context).hasChildren)
                }
            }
            guard arguments.count == 1, case .array(let elements, let arrayOffset) = arguments[0] else {
                throw ExpressionError(offset: offset, "hasChildren() takes no argument or one array literal of child names.", text: name)
            }
            guard !elements.isEmpty else {
                throw ExpressionError(offset: arrayOffset, "hasChildren() needs a non-empty array of child names.")
            }
            var paths: [KeysEvaluator] = []
            for element in elements { paths.append(try childPath(name, element)) }
            let elementPaths = paths
            return Compiled(.boolean) { context throws(RuleFailure) in
                try context.spend()
                let base = try node(&context)
                var all = true
                // Every element is evaluated (a null one is an error) even after one is missing.
                for path in elementPaths {
                    let keys = try path(&context)
                    if all && base.descend(keys).isEmpty { all = false }
                }
                return .bool(all)
            }
        case .exists:
            try checkArity(name, arguments, 0, offset: offset)
            return Compiled(.boolean) { context throws(RuleFailure) in
                try context.spend()
                return .bool(!(try node(&context).isEmpty))
            }
        case .getPriority:
            try checkArity(name, arguments, 0, offset: offset)
            return Compiled(.primitive) { context throws(RuleFailure) in
                try context.spend()
                guard let priority = try node(&context).priority else { return .null }
                return RuleValue(node: priority.node)
            }
        case .isNumber:
            try checkArity(name, arguments, 0, offset: offset)
            return Compiled(.boolean) { context throws(RuleFailure) in
                try context.spend()
                return .bool(try node(&context).leaf?.numberValue != nil)
            }
        case .isString:
            try checkArity(name, arguments, 0, offset: offset)
            return Compiled(.boolean) { context throws(RuleFailure) in
                try context.spend()
                return .bool(try node(&context).leaf?.stringValue != nil)
            }
        case .isBoolean:
            try checkArity(name, arguments, 0, offset: offset)
            return Compiled(.boolean) { context throws(RuleFailure) in
                try context.spend()
                return .bool(try node(&context).leaf?.boolValue != nil)
            }
        }
    }

    /// A relative child path argument: split once at load time when it is a literal.
    private func childPath(_ name: String, _ expression: Expression) throws(ExpressionError) -> KeysEvaluator {
        if case .string(let literal, _) = expression {
            let keys = RuleSnapshot.keys(of: literal)
            return { _ in keys }
        }
        let argument = try stringArgument(name, expression)
        return { context throws(RuleFailure) in
            RuleSnapshot.keys(of: try Self.requireString(try argument(&context), for: name))
        }
    }

    private func compileStringMethod(
        _ method: StringMethod, on object: Compiled, _ arguments: [Expression], offset: Int
    ) throws(ExpressionError) -> Compiled {
        let receiver = object.evaluate
        let name = method.rawValue
        switch method {
        case .contains, .beginsWith, .endsWith:
            try checkArity(name, arguments, 1, offset: offset)
            let argument = try stringArgument(name, arguments[0])
            return Compiled(.boolean) { context throws(RuleFailure) in
                try context.spend()
                let s = try Self.requireString(try receiver(&context), for: name)
                let t = try Self.requireString(try argument(&context), for: name)
                try context.spend(scanning: s.utf8.count)
                switch method {
                case .contains: return .bool(StringSearch.contains(s, t))
                case .beginsWith: return .bool(s.utf8.starts(with: t.utf8))
                default: return .bool(s.utf8.count >= t.utf8.count && s.utf8.reversed().starts(with: t.utf8.reversed()))
                }
            }
        case .replace:
            try checkArity(name, arguments, 2, offset: offset)
            let pattern = try stringArgument(name, arguments[0])
            let replacement = try stringArgument(name, arguments[1])
            return Compiled(.string) { context throws(RuleFailure) in
                try context.spend()
                let s = try Self.requireString(try receiver(&context), for: name)
                let a = try Self.requireString(try pattern(&context), for: name)
                let b = try Self.requireString(try replacement(&context), for: name)
                try context.spend(scanning: s.utf8.count)
                guard let replaced = StringSearch.replacingAll(in: s, a, with: b, bytesMax: RulesLimits.stringResultBytesMax) else {
                    throw RuleFailure.runtime("replace() would build a string over \(RulesLimits.stringResultBytesMax) bytes")
                }
                return .string(replaced)
            }
        case .toLowerCase, .toUpperCase:
            try checkArity(name, arguments, 0, offset: offset)
            let lower = method == .toLowerCase
            return Compiled(.string) { context throws(RuleFailure) in
                try context.spend()
                let s = try Self.requireString(try receiver(&context), for: name)
                return .string(lower ? s.lowercased() : s.uppercased())
            }
        case .matches:
            try checkArity(name, arguments, 1, offset: offset)
            guard case .regex(let pattern, let flags, let regexOffset) = arguments[0] else {
                throw ExpressionError(
                    offset: arguments[0].offset, "matches() takes a regular expression literal such as /^[a-z]+$/.")
            }
            let regex: RuleRegex
            do {
                regex = try RuleRegex(pattern: pattern, flags: flags)
            } catch {
                throw ExpressionError(offset: regexOffset, error.message, text: "/\(pattern)/\(flags)")
            }
            return Compiled(.boolean) { context throws(RuleFailure) in
                try context.spend()
                let s = try Self.requireString(try receiver(&context), for: name)
                // The matcher follows up to every instruction of the pattern per character.
                try context.spend(matching: s.utf8.count, instructions: regex.instructionCount)
                return .bool(regex.matches(s))
            }
        }
    }

    // MARK: Operators

    private func unary(_ op: UnaryOperator, _ operand: Compiled, offset: Int) throws(ExpressionError) -> Compiled {
        let evaluate = operand.evaluate
        switch op {
        case .not:
            guard operand.type == .boolean else {
                throw ExpressionError(offset: offset, "! only operates on booleans, not on a \(operand.type.name).", text: "!")
            }
            return Compiled(.boolean) { context throws(RuleFailure) in
                guard case .bool(let b) = try evaluate(&context) else { throw RuleFailure.runtime("! needs a boolean") }
                return .bool(!b)
            }
        case .negate:
            guard operand.type.mayBeNumber else {
                throw ExpressionError(offset: offset, "Unary - only operates on numbers, not on a \(operand.type.name).", text: "-")
            }
            return Compiled(.number) { context throws(RuleFailure) in
                guard case .number(let n) = try evaluate(&context) else { throw RuleFailure.runtime("unary - needs a number") }
                return .number(-n)
            }
        }
    }

    private func binary(
        _ op: BinaryOperator, _ left: Compiled, _ right: Compiled, offset: Int, rightOffset: Int
    ) throws(ExpressionError) -> Compiled {
        let l = left.evaluate, r = right.evaluate
        func reject(_ side: Compiled, at sideOffset: Int, _ reason: String) -> ExpressionError {
            ExpressionError(offset: sideOffset, "\(op.rawValue) \(reason), not on a \(side.type.name).", text: op.rawValue)
        }
        switch op {
        case .and, .or:
            for (side, sideOffset) in [(left, offset), (right, rightOffset)] where side.type != .boolean {
                throw reject(side, at: sideOffset, "only operates on booleans")
            }
            let isAnd = op == .and
            return Compiled(.boolean) { context throws(RuleFailure) in
                guard case .bool(let a) = try l(&context) else { throw RuleFailure.runtime("\(op.rawValue) needs booleans") }
                if a != isAnd { return .bool(a) }
                guard case .bool(let b) = try r(&context) else { throw RuleFailure.runtime("\(op.rawValue) needs booleans") }
                return .bool(b)
            }
        case .equal, .notEqual:
            for (side, sideOffset) in [(left, offset), (right, rightOffset)] where !side.type.isValue {
                let hint = side.type == .snapshot ? " (use .val() or .exists())" : ""
                throw ExpressionError(
                    offset: sideOffset, "Cannot compare a \(side.type.name) with \(op.rawValue)\(hint).", text: op.rawValue)
            }
            let negate = op == .notEqual
            return Compiled(.boolean) { context throws(RuleFailure) in
                let a = try l(&context)
                let b = try r(&context)
                return .bool(RuleValue.strictlyEqual(a, b) != negate)
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            for (side, sideOffset) in [(left, offset), (right, rightOffset)] where !side.type.isValue || side.type == .boolean {
                throw reject(side, at: sideOffset, "only compares numbers or strings")
            }
            return Compiled(.boolean) { context throws(RuleFailure) in
                let a = try l(&context)
                let b = try r(&context)
                let order: Int
                switch (a, b) {
                case (.number(let x), .number(let y)):
                    if x.isNaN || y.isNaN { return .bool(false) }
                    order = x < y ? -1 : (x == y ? 0 : 1)
                case (.string(let x), .string(let y)):
                    order = KeyOrderUTF16.compare(x, y)
                default:
                    throw RuleFailure.runtime("\(op.rawValue) cannot compare \(a.typeName) with \(b.typeName)")
                }
                switch op {
                case .less: return .bool(order < 0)
                case .lessOrEqual: return .bool(order <= 0)
                case .greater: return .bool(order > 0)
                default: return .bool(order >= 0)
                }
            }
        case .add:
            for (side, sideOffset) in [(left, offset), (right, rightOffset)] where !side.type.isValue || side.type == .boolean {
                throw reject(side, at: sideOffset, "only operates on numbers and strings")
            }
            let type: StaticType =
                left.type == .string || right.type == .string
                ? .string : (left.type == .number && right.type == .number ? .number : .primitive)
            return Compiled(type) { context throws(RuleFailure) in
                let a = try l(&context)
                let b = try r(&context)
                switch (a, b) {
                case (.number(let x), .number(let y)): return .number(x + y)
                case (.string(let x), .string(let y)): return .string(try Self.concatenate(x, y))
                case (.string(let x), .number(let y)): return .string(try Self.concatenate(x, JSNumber.string(y)))
                case (.number(let x), .string(let y)): return .string(try Self.concatenate(JSNumber.string(x), y))
                default: throw RuleFailure.runtime("+ cannot add \(a.typeName) and \(b.typeName)")
                }
            }
        case .subtract, .multiply, .divide, .remainder:
            for (side, sideOffset) in [(left, offset), (right, rightOffset)] where !side.type.mayBeNumber {
                throw reject(side, at: sideOffset, "only operates on numbers")
            }
            return Compiled(.number) { context throws(RuleFailure) in
                let a = try l(&context)
                let b = try r(&context)
                guard case .number(let x) = a, case .number(let y) = b else {
                    throw RuleFailure.runtime("\(op.rawValue) needs numbers, got \(a.typeName) and \(b.typeName)")
                }
                switch op {
                case .subtract: return .number(x - y)
                case .multiply: return .number(x * y)
                // Firebase answers NaN, not Infinity, for a division by zero (docs/rules.md §5.3).
                case .divide: return .number(y == 0 ? .nan : x / y)
                default: return .number(x.truncatingRemainder(dividingBy: y))
                }
            }
        }
    }

    private func conditional(_ condition: Compiled, _ whenTrue: Compiled, _ whenFalse: Compiled, offset: Int) throws(ExpressionError) -> Compiled {
        guard condition.type == .boolean else {
            throw ExpressionError(offset: offset, "The condition of ?: must be a boolean, not a \(condition.type.name).", text: "?")
        }
        let type: StaticType
        if whenTrue.type == whenFalse.type {
            type = whenTrue.type
        } else if !whenTrue.type.isValue || !whenFalse.type.isValue {
            throw ExpressionError(offset: offset, "The branches of ?: must both be values of the same kind.", text: "?")
        } else if whenTrue.type == .any || whenFalse.type == .any {
            type = .any
        } else {
            type = .primitive
        }
        let c = condition.evaluate, t = whenTrue.evaluate, f = whenFalse.evaluate
        if type == .snapshot, let ts = whenTrue.snapshot, let fs = whenFalse.snapshot, let tn = whenTrue.node, let fn = whenFalse.node {
            return Compiled(
                snapshot: { context throws(RuleFailure) in
                    guard case .bool(let b) = try c(&context) else { throw RuleFailure.runtime("?: needs a boolean") }
                    return b ? try ts(&context) : try fs(&context)
                },
                node: { context throws(RuleFailure) in
                    guard case .bool(let b) = try c(&context) else { throw RuleFailure.runtime("?: needs a boolean") }
                    return b ? try tn(&context) : try fn(&context)
                })
        }
        return Compiled(type) { context throws(RuleFailure) in
            guard case .bool(let b) = try c(&context) else { throw RuleFailure.runtime("?: needs a boolean") }
            return b ? try t(&context) : try f(&context)
        }
    }
}

/// The rule property an expression belongs to.
public enum RuleKind: String, Sendable, Hashable {
    case read = ".read"
    case write = ".write"
    case validate = ".validate"
}

typealias KeysEvaluator = @Sendable (inout EvaluationContext) throws(RuleFailure) -> [ChildKey]

enum SnapshotMethod: String {
    case val, child, parent, hasChild, hasChildren, exists, getPriority, isNumber, isString, isBoolean
}

enum StringMethod: String {
    case contains, beginsWith, endsWith, replace, toLowerCase, toUpperCase, matches
}
