/// `type` statements and type expressions.
extension Parser {
    /// `type Name[<T, ...>] [extends Type] ({ members } | ;)`
    mutating func parseType() throws(BoltError) {
        let nameToken = try peek()
        guard case .identifier(let name) = nameToken.kind, name != "extends" else {
            throw error("Missing type name; found \(nameToken.quoted)", at: nameToken)
        }
        try advance()
        var parameters: [String] = []
        if try accept("<") {
            while true {
                let token = try advance()
                guard case .identifier(let parameter) = token.kind else {
                    throw error("Expected a type parameter name; found \(token.quoted)", at: token)
                }
                parameters.append(parameter)
                if try accept(">") { break }
                _ = try expect(",", "Expected ',' or '>' in the type parameters")
            }
        }
        var derivedFrom: TypeExpression?
        if try peek().isIdentifier("extends") {
            try advance()
            derivedFrom = try parseTypeExpression()
        }
        var properties: [(name: String, type: TypeExpression, location: SourceLocation?)] = []
        var methods = MethodTable()
        if try accept("{") {
            while !(try accept("}")) {
                let token = try advance()
                let memberName: String
                switch token.kind {
                case .identifier(let identifier): memberName = identifier
                case .string(let quoted): memberName = quoted
                default: throw error("Invalid property or method: \(token.quoted)", at: token)
                }
                let next = try peek()
                if next.isPunctuation(":") {
                    try advance()
                    let type = try parseTypeExpression()
                    if properties.contains(where: { $0.name == memberName }) {
                        throw error("Duplicated property definition: \(memberName).", at: token)
                    }
                    properties.append((memberName, type, token.location))
                    if !(try accept(",")) { _ = try accept(";") }
                } else if next.isPunctuation("("), case .identifier = token.kind {
                    let method = try parseMethod(name: memberName, at: token, invalid: "Invalid property or method: missing body of '\(memberName)'")
                    try add(method, to: &methods)
                } else {
                    throw error("Invalid property or method: expected ':' or '(' after \(token.quoted) but found \(next.quoted)", at: next)
                }
            }
        } else {
            _ = try accept(";")
        }
        guard program.schemas[name] == nil else {
            throw error("Duplicated type definition: \(name).", at: nameToken)
        }
        program.schemas[name] = Schema(
            name: name, derivedFrom: derivedFrom ?? .simple(properties.isEmpty ? "Any" : "Object"),
            properties: properties, methods: methods, parameters: parameters, location: nameToken.location)
        program.schemaOrder.append(name)
    }

    /// `Name`, `Name<A, B>`, `T[]` (a `Map<String, T>`) and unions `A | B`.
    mutating func parseTypeExpression() throws(BoltError) -> TypeExpression {
        try nested { parser throws(BoltError) in try parser.parseUnionType() }
    }

    private mutating func parseUnionType() throws(BoltError) -> TypeExpression {
        var parts = [try parseSingleType()]
        while try accept("|") {
            parts.append(try parseSingleType())
        }
        return parts.count == 1 ? parts[0] : .union(parts)
    }

    private mutating func parseSingleType() throws(BoltError) -> TypeExpression {
        let token = try advance()
        guard case .identifier(let name) = token.kind else {
            throw error("Expected a type name; found \(token.quoted)", at: token)
        }
        var type = TypeExpression.simple(name)
        if try accept("<") {
            var parameters: [TypeExpression] = []
            while true {
                parameters.append(try parseTypeExpression())
                if try accept(">") { break }
                _ = try expect(",", "Expected ',' or '>' in the type parameters")
            }
            type = .generic(name, parameters)
        }
        while try peek().isPunctuation("[") {
            try advance()
            _ = try expect("]", "Expected ']' after '[' in an array type")
            type = .generic("Map", [.simple("String"), type])
        }
        return type
    }
}
