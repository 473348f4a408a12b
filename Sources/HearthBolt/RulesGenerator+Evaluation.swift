/// Partial evaluation of expressions (bolt.md §6.3): functions are inlined as macros, variables replaced by
/// their values, snapshot references expanded with `child()`, and `.val()` inserted where a value is needed.
extension RulesGenerator {
    /// Value methods of strings: Bolt's spelling, the rules language's spelling and the parameter count.
    static let stringMethods: [String: (rulesName: String, parameterCount: Int)] = [
        "includes": ("contains", 1), "startsWith": ("beginsWith", 1), "endsWith": ("endsWith", 1),
        "replace": ("replace", 2), "test": ("matches", 1),
    ]

    /// Names that are read as a property of a value (`this.length` is `newData.val().length`).
    static let valueMethods: Set<String> = [
        "length", "includes", "startsWith", "beginsWith", "endsWith", "replace", "toLowerCase", "toUpperCase",
        "test", "contains", "matches",
    ]

    /// Names that stay methods of a snapshot instead of becoming `child('name')`.
    static let snapshotMethods: Set<String> = valueMethods.union(["parent", "child", "hasChildren", "val", "isString", "isNumber", "isBoolean"])

    /// The text of one rule at `labels`: `terms` AND-ed, evaluated with `this` as `thisIs` (`newData` for
    /// `.validate` and `.write`, `data` for `.read`), made boolean and printed.
    func ruleText(_ terms: [Expression], thisIs: String, scope: [String: Expression], labels: [String]) throws(BoltError) -> String {
        var expression = Expression.and(try Self.collapseHasChildren(terms))
        // First inline functions and bind captures, with `this` and `root` left as placeholders ...
        allowUndefinedFunctions = true
        var parameters = scope
        parameters["this"] = Expression.call(.variable("@getThis")).cast(snapshot: true)
        expression = try evaluate(expression, parameters)
        // ... then resolve the placeholders, `prior()` and `key()` for this location.
        allowUndefinedFunctions = false
        resolvesBuiltins = true
        self.thisIs = thisIs
        pathLabels = labels
        defer { resolvesBuiltins = false }
        expression = try evaluate(expression, [:])
        warnAboutUnknownVariables(in: expression, labels: labels)
        return expression.ensuringBoolean.rulesText
    }

    /// Variables the rules language defines; Bolt prints any other unresolved name as written.
    static let rulesVariables: Set<String> = ["auth", "now", "root", "data", "newData", "query"]

    /// Bolt emits an unresolved name verbatim (`samples/groups.json` has `members != null`), which Firebase
    /// then refuses to load. Hearth compiles it the same way, for parity, but says so.
    private func warnAboutUnknownVariables(in expression: Expression, labels: [String]) {
        var variables: [Expression] = []
        expression.collectVariables(into: &variables)
        for variable in variables {
            guard case .variable(let name) = variable.node, !Self.rulesVariables.contains(name) else { continue }
            let location = "/" + labels.joined(separator: "/")
            let warning = BoltWarning(
                "Unknown variable '\(name)' at \(location) is copied into the rules as written; Firebase rejects rules that use it",
                at: variable.location)
            if !warnings.contains(warning) { warnings.append(warning) }
        }
    }

    /// Merges every `hasChildren(...)` term into one call placed first.
    static func collapseHasChildren(_ terms: [Expression]) throws(BoltError) -> [Expression] {
        var found = false
        var names: [String] = []
        var rest: [Expression] = []
        for term in terms {
            guard case .call(_, let arguments) = term.node, term.calledName == "hasChildren" else {
                rest.append(term)
                continue
            }
            found = true
            if arguments.isEmpty { continue }
            guard arguments.count == 1, case .array(let elements) = arguments[0].node else {
                throw BoltError(.generate, "Invalid argument to hasChildren(): expected an array of property names", at: term.location)
            }
            for element in elements {
                guard let name = element.stringValue else {
                    throw BoltError(.generate, "Expect string argument to hasChildren(), not: \(element.rulesText)", at: term.location)
                }
                names.append(name)
            }
        }
        return found ? [hasChildren(names)] + rest : rest
    }

    // MARK: Evaluation

    func evaluate(_ expression: Expression, _ parameters: [String: Expression]) throws(BoltError) -> Expression {
        var result = expression
        switch expression.node {
        case .unary(let op, let operand):
            let evaluated = try evaluate(operand, parameters)
            result.node = .unary(op, op == .not ? evaluated.ensuringBoolean : evaluated.ensuringValue)
            return result
        case .binary(let op, let left, let right):
            let isLogical = op == .and || op == .or
            let l = try evaluate(left, parameters), r = try evaluate(right, parameters)
            result.node = isLogical ? .binary(op, l.ensuringBoolean, r.ensuringBoolean) : .binary(op, l.ensuringValue, r.ensuringValue)
            return result
        case .conditional(let condition, let then, let otherwise):
            result.node = .conditional(
                try evaluate(condition, parameters).ensuringBoolean, try evaluate(then, parameters).ensuringValue,
                try evaluate(otherwise, parameters).ensuringValue)
            return result
        case .variable(let name):
            if let value = parameters[name] { return value }
            if name == "root" { return .call(.variable("@root")) }
            return expression
        case .reference(let base, let accessor):
            return try evaluateReference(expression, base: base, accessor: accessor, parameters)
        case .call(let callee, let arguments):
            return try evaluateCall(expression, callee: callee, arguments: arguments, parameters)
        default:
            return expression
        }
    }

    private func evaluateReference(
        _ expression: Expression, base: Expression, accessor: Expression, _ parameters: [String: Expression]
    ) throws(BoltError) -> Expression {
        var result = expression
        let evaluatedBase = try evaluate(base, parameters)
        guard evaluatedBase.isSnapshot else {
            result.node = .reference(base: evaluatedBase, accessor: try evaluate(accessor, parameters))
            return result
        }
        if let name = accessor.stringValue {
            if Self.valueMethods.contains(name) {
                // snapshot.length → snapshot.val().length
                result.node = .reference(base: evaluatedBase.ensuringValue, accessor: accessor)
                return result
            }
            if Self.snapshotMethods.contains(name) {
                result.node = .reference(base: evaluatedBase, accessor: accessor)
                return result
            }
        }
        // snapshot.name and snapshot[exp] → snapshot.child('name') and snapshot.child(exp)
        let child = try evaluate(accessor, parameters).ensuringValue
        return Expression.call(.member(evaluatedBase, "child"), [child]).cast(snapshot: true)
    }

    private func evaluateCall(
        _ expression: Expression, callee: Expression, arguments: [Expression], _ parameters: [String: Expression]
    ) throws(BoltError) -> Expression {
        let evaluatedCallee = try evaluate(callee, parameters)
        let location = expression.location ?? contextLocation

        if case .variable(let name) = evaluatedCallee.node {
            if let function = program.functions[name] {
                return try inline(function, name: name, arguments: arguments, parameters, at: location)
            }
            if resolvesBuiltins, let builtin = try evaluateBuiltin(name, arguments: arguments, parameters, at: location) {
                return builtin
            }
        }
        if case .reference(let base, let accessor) = evaluatedCallee.node, let name = accessor.stringValue,
            let method = Self.stringMethods[name]
        {
            return try stringMethod(name, method, receiver: base, arguments: arguments, parameters, at: location)
        }

        if !allowUndefinedFunctions, let name = expression.withCallee(evaluatedCallee).calledName, !name.isEmpty,
            !Self.snapshotMethods.contains(name), Self.stringMethods[name] == nil, name != "validate"
        {
            throw BoltError(.generate, "Undefined function: \(evaluatedCallee.rulesText)", at: location)
        }
        var evaluatedArguments: [Expression] = []
        for argument in arguments { evaluatedArguments.append(try evaluate(argument, parameters)) }
        var result = expression
        result.node = .call(callee: evaluatedCallee, arguments: evaluatedArguments)
        // snapshot.parent() is a snapshot too.
        if result.calledName == "parent" { result.isSnapshot = true }
        return result
    }

    /// Expands a user function inline: arguments are evaluated in the caller's scope, the body only sees them.
    private func inline(
        _ function: Method, name: String, arguments: [Expression], _ parameters: [String: Expression], at location: SourceLocation?
    ) throws(BoltError) -> Expression {
        guard function.parameters.count == arguments.count else {
            throw BoltError(
                .generate,
                "Incorrect number of function arguments. (\(name) expects \(function.parameters.count) but actually passed \(arguments.count))",
                at: location)
        }
        var inner: [String: Expression] = [:]
        for (parameter, argument) in zip(function.parameters, arguments) {
            inner[parameter] = try evaluate(argument, parameters)
        }
        guard activeCalls.insert(name).inserted else {
            throw BoltError(.generate, "Recursive function call. (\(name))", at: location)
        }
        defer { activeCalls.remove(name) }
        inlinedCalls += 1
        guard inlinedCalls <= BoltLimits.inlinedCallsMax else {
            throw BoltError(.generate, "Expanding functions took more than \(BoltLimits.inlinedCallsMax) calls; simplify the functions", at: location)
        }
        let result = try evaluate(function.body, inner)
        guard result.height <= BoltLimits.expressionHeightMax else {
            throw BoltError(
                .generate, "Expression deeper than \(BoltLimits.expressionHeightMax) levels after expanding \(name)()", at: location)
        }
        return result
    }

    /// `includes`, `startsWith`, `endsWith`, `replace` and `test` on a value, renamed for the rules language.
    private func stringMethod(
        _ name: String, _ method: (rulesName: String, parameterCount: Int), receiver: Expression, arguments: [Expression],
        _ parameters: [String: Expression], at location: SourceLocation?
    ) throws(BoltError) -> Expression {
        guard arguments.count == method.parameterCount else {
            throw BoltError(
                .generate,
                "Incorrect number of function arguments. (String.\(name) expects \(method.parameterCount) but actually passed \(arguments.count))",
                at: location)
        }
        let value = try evaluate(receiver.ensuringValue, parameters).ensuringValue
        var evaluatedArguments: [Expression] = []
        for argument in arguments {
            let evaluated = try evaluate(argument, parameters).ensuringValue
            if name == "test" {
                guard case .regularExpression = evaluated.node else {
                    throw BoltError(.generate, "Cannot convert value: \(evaluated.rulesText) => RegExp", at: location)
                }
            }
            evaluatedArguments.append(evaluated)
        }
        return .call(.member(value, method.rulesName), evaluatedArguments)
    }

    /// `prior(exp)`, `key()` and the `this` and `root` placeholders, once the location is known.
    private func evaluateBuiltin(
        _ name: String, arguments: [Expression], _ parameters: [String: Expression], at location: SourceLocation?
    ) throws(BoltError) -> Expression? {
        let expected: Int
        switch name {
        case "prior": expected = 1
        case "key", "@getThis", "@root": expected = 0
        default: return nil
        }
        guard arguments.count == expected else {
            throw BoltError(
                .generate,
                "Incorrect number of function arguments. (\(name) expects \(expected) but actually passed \(arguments.count))",
                at: location)
        }
        switch name {
        case "prior":
            let saved = thisIs
            thisIs = "data"
            defer { thisIs = saved }
            return try evaluate(arguments[0], parameters)
        case "key":
            guard let label = pathLabels.last else { return .string("") }
            return label.hasPrefix("$") ? .literal(label) : .string(label)
        case "@getThis":
            return .variable(thisIs, isSnapshot: true)
        default:
            // `root` in a read rule is the JSON `root`; in a write or validate rule it is the root after the
            // write, reached by climbing from `newData` (Firebase has no `newRoot` variable).
            if thisIs == "data" { return .variable("root", isSnapshot: true) }
            var root = Expression.variable("newData", isSnapshot: true)
            for _ in pathLabels { root = Expression.call(.member(root.cast(snapshot: false), "parent")).cast(snapshot: true) }
            return root
        }
    }
}

extension Expression {
    /// The variables in this expression, in order of appearance.
    fileprivate func collectVariables(into names: inout [Expression]) {
        switch node {
        case .variable: names.append(self)
        case .array(let elements): for element in elements { element.collectVariables(into: &names) }
        case .reference(let base, let accessor):
            base.collectVariables(into: &names)
            accessor.collectVariables(into: &names)
        case .call(let callee, let arguments):
            callee.collectVariables(into: &names)
            for argument in arguments { argument.collectVariables(into: &names) }
        case .unary(_, let operand): operand.collectVariables(into: &names)
        case .binary(_, let left, let right):
            left.collectVariables(into: &names)
            right.collectVariables(into: &names)
        case .conditional(let a, let b, let c):
            a.collectVariables(into: &names)
            b.collectVariables(into: &names)
            c.collectVariables(into: &names)
        default: break
        }
    }

    /// This call with its callee replaced (to ask for the called name after evaluation).
    fileprivate func withCallee(_ callee: Expression) -> Expression {
        guard case .call(_, let arguments) = node else { return self }
        var copy = self
        copy.node = .call(callee: callee, arguments: arguments)
        return copy
    }
}
