/// Validator trees for type expressions (bolt.md §6.2).
extension RulesGenerator {
    /// The validator for `type`, built once per printed type expression.
    func validator(for type: TypeExpression) throws(BoltError) -> Validator {
        let key = type.description
        if let existing = validators[key] { return existing }
        // A type that contains itself would need an infinitely deep validator. Bolt prints the marker
        // `***TYPE RECURSION***` as the rule, which Firebase then rejects; Hearth reports it here instead.
        guard typesInProgress.insert(key).inserted else {
            throw error("Recursive type definition: \(key) contains itself, and rules cannot validate unbounded nesting")
        }
        defer { typesInProgress.remove(key) }
        guard typesInProgress.count <= BoltLimits.typeNestingMax else {
            throw error("Types nest deeper than \(BoltLimits.typeNestingMax) levels (at \(key))")
        }
        let savedAllowance = allowUndefinedFunctions
        allowUndefinedFunctions = true
        defer { allowUndefinedFunctions = savedAllowance }
        let created = try createValidator(for: type)
        guard created.locationCount <= BoltLimits.validatorLocationsMax else {
            throw error("The type \(key) expands to more than \(BoltLimits.validatorLocationsMax) rule locations "
                + "(types that use the next type several times, many levels deep, multiply); simplify the types")
        }
        validators[key] = created
        return created
    }

    private func createValidator(for type: TypeExpression) throws(BoltError) -> Validator {
        switch type {
        case .simple(let name):
            guard let schema = program.schemas[name] else { throw error("No type definition for: \(name)") }
            if schema.isGeneric { throw error("No type definition for: \(name) used as non-generic type.") }
            return try validator(for: schema)
        case .union(let parts):
            // AND each part's terms, then OR the parts key by key.
            var union = Validator()
            for part in parts {
                var single = try validator(for: part)
                single.combineTerms(Expression.and)
                union.extend(with: single)
            }
            union.combineTerms(Expression.or)
            return union
        case .generic(let name, let parameters):
            guard let schema = program.schemas[name], schema.isGeneric else {
                throw error("No type definition for: \(name) (generic)")
            }
            guard parameters.count == schema.parameters.count else {
                throw error("Invalid generic schema usage: expected <\(schema.parameters.joined(separator: ", "))>")
            }
            if name == "Map" { return try mapValidator(key: parameters[0], value: parameters[1]) }
            var bindings: [String: TypeExpression] = [:]
            for (parameter, type) in zip(schema.parameters, parameters) { bindings[parameter] = type }
            var expanded = schema
            expanded.derivedFrom = schema.derivedFrom.substituting(bindings)
            expanded.properties = schema.properties.map { ($0.name, $0.type.substituting(bindings), $0.location) }
            return try validator(for: expanded)
        }
    }

    private func validator(for schema: Schema) throws(BoltError) -> Validator {
        let isCollection = schema.properties.count == 1 && schema.properties[0].name.hasPrefix("$")
        let hasProperties = !schema.properties.isEmpty && !isCollection
        if hasProperties && !isDerived(schema.derivedFrom, from: "Object") {
            throw error("Type contains properties and must extend 'Object'. (\(schema.name) is \(schema.derivedFrom))", at: schema.location)
        }
        var result = Validator()
        if schema.derivedFrom != .simple("Any") {
            result.extend(with: try validator(for: schema.derivedFrom))
        }
        var required: [String] = []
        var wildcards = 0
        for property in schema.properties {
            let isWildcard = property.name.hasPrefix("$")
            if isWildcard { wildcards += 1 }
            if Self.isInvalidKey(isWildcard ? String(property.name.dropFirst()) : property.name) {
                throw error("Property names cannot contain any of: . $ # [ ] / or control characters: \(property.name)", at: property.location)
            }
            if !isWildcard && !isNullable(property.type) { required.append(property.name) }
            let saved = contextLocation
            contextLocation = property.location ?? saved
            let propertyValidator = try validator(for: property.type)
            contextLocation = saved
            result.withChild(property.name) { $0.extend(with: propertyValidator) }
        }
        if wildcards > 1 || (wildcards == 1 && !required.isEmpty) {
            throw error("Types can have at most one $wild property and cannot mix with other properties.", at: schema.location)
        }
        if !required.isEmpty {
            result.append([Self.hasChildren(required)], to: ".validate")
        }
        if hasProperties {
            result.withChild("$other") { $0.append([.false], to: ".validate") }
        }
        Self.addMethods(schema.methods, to: &result)
        return result
    }

    /// `Map<Key, Value>` and `Value[]`: `hasChildren()` here, and under a fresh `$keyN` the key type's
    /// `validate()` bodies (with `this` bound to `$keyN`) followed by the value's validator.
    private func mapValidator(key: TypeExpression, value: TypeExpression) throws(BoltError) -> Validator {
        guard case .simple = key, isDerived(key, from: "String") else {
            throw error("Map<Key, T> - Key must derive from String type.  (\(key) does not)")
        }
        keyCount += 1
        let index = "$key\(keyCount)"
        var result = Validator()
        result.ensureChild(index)
        result.extend(with: try validator(for: .simple("Object")))
        var keyType = key
        var visited: Set<String> = []
        while let name = keyType.name, name != "String", let schema = program.schemas[name], visited.insert(name).inserted {
            if let validate = schema.methods["validate"] {
                let term = try evaluate(validate.body, ["this": .literal(index)])
                result.withChild(index) { $0.append([term], to: ".validate") }
            }
            keyType = schema.derivedFrom
        }
        let valueValidator = try validator(for: value)
        result.withChild(index) { $0.extend(with: valueValidator) }
        return result
    }

    /// `this.hasChildren()` or `this.hasChildren(['a', 'b'])`.
    static func hasChildren(_ names: [String]) -> Expression {
        let arguments = names.isEmpty ? [] : [Expression(.array(names.map(Expression.string)))]
        return .call(.member(.variable("this"), "hasChildren"), arguments)
    }

    /// Firebase keys cannot contain `. $ # [ ] /` or control characters.
    static func isInvalidKey(_ name: String) -> Bool {
        name.unicodeScalars.contains { ".$#[]/".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F }
    }

    /// Maps and arrays may be empty and so absent; `T | Null` is optional by definition.
    func isNullable(_ type: TypeExpression) -> Bool {
        isDerived(type, from: "Null") || isDerived(type, from: "Map")
    }

    func isDerived(_ type: TypeExpression, from ancestor: String) -> Bool {
        var visited: Set<String> = []
        return isDerived(type, from: ancestor, visited: &visited)
    }

    private func isDerived(_ type: TypeExpression, from ancestor: String, visited: inout Set<String>) -> Bool {
        if ancestor == "Any" { return true }
        switch type {
        case .simple(let name), .generic(let name, _):
            if name == ancestor { return true }
            if name == "Any" { return false }
            guard let schema = program.schemas[name], visited.insert(name).inserted else { return false }
            return isDerived(schema.derivedFrom, from: ancestor, visited: &visited)
        case .union(let parts):
            return parts.contains { isDerived($0, from: ancestor, visited: &visited) }
        }
    }
}

extension TypeExpression {
    /// The type's name for a simple or generic type.
    var name: String? {
        switch self {
        case .simple(let name), .generic(let name, _): name
        case .union: nil
        }
    }
}
