/// Turns a parsed ``BoltProgram`` into rules JSON (bolt.md §6).
///
/// Generation has two stages, as in Firebase's compiler. First every path statement grafts the validator
/// tree of its type and its own methods at its location, with rule terms kept as unevaluated expressions
/// (`this` still unbound). Then every term list is AND-ed, evaluated for its location (`this` becomes
/// `newData` or `data`, `root` and `key()` depend on the path) and printed. Evaluating late is what lets
/// one type's validator serve several locations.
final class RulesGenerator {
    var program: BoltProgram
    var warnings: [BoltWarning] = []
    /// Validators memoised by the printed type expression, so identical map types share one `$keyN`.
    var validators: [String: Validator] = [:]
    var keyCount = 0
    /// Types whose validator is being built, to catch a type that contains itself.
    var typesInProgress: Set<String> = []
    /// Where the construct being generated was written, for errors that have no expression to point at.
    var contextLocation: SourceLocation?

    // Evaluation state (see RulesGenerator+Evaluation.swift).
    var allowUndefinedFunctions = false
    var resolvesBuiltins = false
    var thisIs = "newData"
    var pathLabels: [String] = []
    var activeCalls: Set<String> = []
    /// Function calls inlined so far, bounded by ``BoltLimits/inlinedCallsMax``.
    var inlinedCalls = 0
    /// Locations grafted by path statements so far, bounded by ``BoltLimits/validatorLocationsMax``
    /// (many paths of one large type multiply as nested types do).
    var graftedLocations = 0

    static let builtinTypeNames = ["Any", "Null", "String", "Number", "Boolean", "Object", "Map"]

    init(_ program: BoltProgram) throws(BoltError) {
        self.program = program
        for name in Self.builtinTypeNames where program.schemas[name] != nil {
            throw BoltError(.generate, "Duplicated schema definition: \(name).", at: program.schemas[name]?.location)
        }
        registerBuiltinSchemas()
    }

    private func registerBuiltinSchemas() {
        let this = Expression.variable("this")
        func builtin(_ name: String, _ validate: Expression, parameters: [String] = []) {
            var methods = MethodTable()
            methods.add(Method(name: "validate", parameters: ["this"], body: validate))
            program.schemas[name] = Schema(
                name: name, derivedFrom: .simple("Any"), properties: [], methods: methods, parameters: parameters)
        }
        func snapshotCall(_ method: String) -> Expression { .call(.member(this, method)) }
        builtin("Any", .true)
        builtin("Object", snapshotCall("hasChildren"))
        // Firebase never validates a deletion, so a rule can never see `this == null`: Null's validator is
        // `false`, which disappears when OR-ed into a union such as `Number | Null`.
        builtin("Null", .false)
        builtin("String", snapshotCall("isString"))
        builtin("Number", snapshotCall("isNumber"))
        builtin("Boolean", snapshotCall("isBoolean"))
        program.schemas["Map"] = Schema(
            name: "Map", derivedFrom: .simple("Any"), properties: [], methods: MethodTable(), parameters: ["Key", "Value"])
    }

    func error(_ message: String, at location: SourceLocation? = nil) -> BoltError {
        BoltError(.generate, message, at: location ?? contextLocation)
    }

    // MARK: Whole program

    func generate() throws(BoltError) -> RulesJSON {
        let writeAliases = ["create", "update", "delete"]
        for path in program.paths {
            try checkMethods(path.methods, allowed: ["validate", "read", "write", "index"] + writeAliases, in: "path", at: path.location)
        }
        for name in program.schemaOrder {
            let schema = program.schemas[name]!
            try checkMethods(schema.methods, allowed: ["validate", "read", "write"] + writeAliases, in: "type", at: schema.location)
        }
        guard !program.paths.isEmpty else {
            throw BoltError(.generate, "Must have at least one path expression.", at: nil)
        }
        var rules = Validator()
        for path in program.paths {
            contextLocation = path.location
            try addRules(for: path, to: &rules)
        }
        contextLocation = nil
        let converted = try convert(rules, labels: [], siblingKeys: rules.keys, scope: [:])
        return .object([("rules", converted ?? .object([]))])
    }

    private func checkMethods(_ methods: MethodTable, allowed: [String], in statement: String, at location: SourceLocation?) throws(BoltError) {
        for method in methods.methods where !allowed.contains(method.name) {
            let list = allowed.map { "'\($0)'" }.joined(separator: ", ")
            warnings.append(BoltWarning("Unsupported method name in \(statement) statement: '\(method.name)' (allowed: \(list))", at: method.location))
        }
        if methods["write"] != nil {
            for alias in ["create", "update", "delete"] where methods[alias] != nil {
                throw BoltError(.generate, "Cannot have both a write() method and a write-aliasing method: \(alias)", at: methods[alias]?.location ?? location)
            }
        }
    }

    /// Grafts a path statement's type validator, scope, methods and index at its location.
    private func addRules(for path: PathStatement, to rules: inout Validator) throws(BoltError) {
        let typeValidator = try validator(for: path.type)
        graftedLocations += typeValidator.locationCount
        guard graftedLocations <= BoltLimits.validatorLocationsMax else {
            throw BoltError(.generate, "The path statements' types add up to more than \(BoltLimits.validatorLocationsMax) rule locations; simplify the types", at: path.location)
        }
        var indexOn: [String]?
        if let index = path.methods["index"] {
            indexOn = try Self.indexNames(index)
        }
        let methods = path.methods
        let scope = path.scope
        Self.at(path.labels[...], in: &rules) { location in
            location.extend(with: typeValidator)
            location.scope = scope
            Self.addMethods(methods, to: &location)
            if let indexOn { location.setNames(indexOn, at: ".indexOn") }
        }
    }

    private static func at(_ labels: ArraySlice<String>, in validator: inout Validator, _ body: (inout Validator) -> Void) {
        guard let first = labels.first else { return body(&validator) }
        validator.withChild(first) { child in at(labels.dropFirst(), in: &child, body) }
    }

    /// `index()` must return a string or an array of strings.
    private static func indexNames(_ method: Method) throws(BoltError) -> [String] {
        let message = "The index function must return a String or an array of Strings."
        switch method.body.node {
        case .string(let name): return [name]
        case .array(let elements):
            var names: [String] = []
            for element in elements {
                guard let name = element.stringValue else {
                    throw BoltError(.generate, message + " (not \(element.rulesText))", at: method.location)
                }
                names.append(name)
            }
            return names
        default:
            throw BoltError(.generate, message, at: method.location)
        }
    }

    /// The write aliases OR-ed into `.write`, then `validate`, `read` and `write` bodies (bolt.md §6.5–6.6).
    static func addMethods(_ methods: MethodTable, to validator: inout Validator) {
        let this = Expression.variable("this")
        let prior = Expression.call(.variable("prior"), [this])
        let null = Expression(.null)
        let aliasConditions: [(String, Expression)] = [
            ("create", .binary(.equal, prior, null)),
            ("update", .and([.binary(.notEqual, prior, null), .binary(.notEqual, this, null)])),
            ("delete", .and([.binary(.notEqual, prior, null), .binary(.equal, this, null)])),
        ]
        var writes: [Expression] = []
        for (alias, condition) in aliasConditions {
            if let method = methods[alias] { writes.append(.and([condition, method.body])) }
        }
        if !writes.isEmpty { validator.append([.or(writes)], to: ".write") }
        for name in ["validate", "read", "write"] {
            if let method = methods[name] { validator.append([method.body], to: "." + name) }
        }
    }
}
