/// Parses Bolt source into a ``BoltProgram`` (bolt.md §1–5), collecting warnings on the way.
///
/// Hand-written recursive descent. Messages follow the wording of Firebase's Bolt compiler where its tests
/// check them (`shared/testdata/bolt/compiler-cases.json`), so tools and people who know Bolt recognise them.
struct Parser {
    var lexer: Lexer
    private var lookahead: Token?
    var program = BoltProgram()
    var warnings: [BoltWarning] = []
    /// Current recursion depth, bounded by ``BoltLimits/sourceNestingMax``.
    var nesting = 0

    init(_ source: String) {
        lexer = Lexer(source)
    }

    /// Parses the whole source.
    static func parse(_ source: String) throws(BoltError) -> (program: BoltProgram, warnings: [BoltWarning]) {
        var parser = Parser(source)
        try parser.parseStatements()
        return (parser.program, parser.warnings)
    }

    // MARK: Token access

    mutating func peek() throws(BoltError) -> Token {
        if let lookahead { return lookahead }
        let token = try lexer.next()
        lookahead = token
        return token
    }

    @discardableResult
    mutating func advance() throws(BoltError) -> Token {
        let token = try peek()
        lookahead = nil
        return token
    }

    /// Forgets the lookahead and moves the lexer back to `offset`, to rescan text in another mode.
    mutating func rewind(to offset: Int) {
        lookahead = nil
        lexer.reset(to: offset)
    }

    /// Consumes the punctuation `text` if it is next.
    mutating func accept(_ text: String) throws(BoltError) -> Bool {
        guard try peek().isPunctuation(text) else { return false }
        try advance()
        return true
    }

    /// Consumes the punctuation `text`, or fails with `message` and the token found instead.
    mutating func expect(_ text: String, _ message: String) throws(BoltError) -> Token {
        let token = try peek()
        guard token.isPunctuation(text) else { throw error("\(message); found \(token.quoted)", at: token) }
        return try advance()
    }

    /// Runs `body` one nesting level deeper, failing cleanly past ``BoltLimits/sourceNestingMax``.
    mutating func nested<Result>(_ body: (inout Parser) throws(BoltError) -> Result) throws(BoltError) -> Result {
        guard nesting < BoltLimits.sourceNestingMax else {
            throw error("Nesting deeper than \(BoltLimits.sourceNestingMax) levels is not supported", at: try peek())
        }
        nesting += 1
        defer { nesting -= 1 }
        return try body(&self)
    }

    func error(_ message: String, at token: Token) -> BoltError {
        BoltError(.parse, message, at: token.location)
    }

    mutating func warn(_ message: String, at location: SourceLocation?) {
        warnings.append(BoltWarning(message, at: location))
    }

    // MARK: Statements

    private mutating func parseStatements() throws(BoltError) {
        while true {
            let token = try peek()
            switch token.kind {
            case .end:
                return
            case .identifier("function"):
                try advance()
                let function = try parseFunction(keyword: true)
                try register(function)
            case .identifier("type"):
                try advance()
                try parseType()
            case .identifier("path"):
                try advance()
                try parsePath(parent: [], at: token)
            case .punctuation("/"):
                try parsePath(parent: [], at: token)
            case .identifier:
                let function = try parseFunction(keyword: false)
                try register(function)
            case .punctuation(";"), .punctuation(","):
                try advance()
                warn("Extra separator (\(token.quoted)) between statements is not needed", at: token.location)
            default:
                throw error("Expected a function, type or path statement; found \(token.quoted)", at: token)
            }
        }
    }

    private mutating func register(_ function: Method) throws(BoltError) {
        guard program.functions[function.name] == nil else {
            throw BoltError(.parse, "Duplicated function definition: \(function.name).", at: function.location)
        }
        program.functions[function.name] = function
    }

    /// `function f(a, b) { [return] exp [;] }`, `f(a, b) { exp }`, or the deprecated `f(a, b) = exp;`.
    private mutating func parseFunction(keyword: Bool) throws(BoltError) -> Method {
        let nameToken = try advance()
        guard case .identifier(let name) = nameToken.kind else {
            throw error("Missing function name; found \(nameToken.quoted)", at: nameToken)
        }
        guard try peek().isPunctuation("(") else {
            if keyword { throw error("Missing parameters for function '\(name)'", at: try peek()) }
            throw error("Expected a function, type or path statement; found \(nameToken.quoted)", at: nameToken)
        }
        let parameters = try parseParameters()
        let next = try peek()
        if next.isPunctuation("{") {
            let body = try parseBody()
            return Method(name: name, parameters: parameters, body: body, location: nameToken.location)
        }
        if next.isPunctuation("=") {
            try advance()
            let body = try parseExpression()
            _ = try accept(";")
            warn("fn(x) = exp; format is deprecated; write fn(x) { exp } instead (function '\(name)')", at: nameToken.location)
            return Method(name: name, parameters: parameters, body: body, location: nameToken.location)
        }
        throw error("Missing body of function '\(name)'; expected '{' but found \(next.quoted)", at: next)
    }

    /// `(a, b)`: parameter names.
    mutating func parseParameters() throws(BoltError) -> [String] {
        _ = try expect("(", "Expected '('")
        var names: [String] = []
        if try accept(")") { return names }
        while true {
            let token = try advance()
            guard case .identifier(let name) = token.kind else {
                throw error("Expected a parameter name; found \(token.quoted)", at: token)
            }
            names.append(name)
            if try accept(")") { return names }
            _ = try expect(",", "Expected ',' or ')' in the parameter list")
        }
    }

    /// `{ [return] exp [;] }`: a function or method body.
    mutating func parseBody() throws(BoltError) -> Expression {
        _ = try expect("{", "Expected '{'")
        if try peek().isIdentifier("return") { try advance() }
        let body = try parseExpression()
        _ = try accept(";")
        let close = try peek()
        if close.isPunctuation("=") { throw error(Self.equalityMessage, at: close) }
        _ = try expect("}", "Expected '}' after the body's expression")
        return body
    }

    static let equalityMessage = "Equality operator should be written as ==, not =."

    /// `name(params) { body }` inside a type or path, with the extra-separator warning.
    private mutating func parseMethod(name: String, at nameToken: Token, invalid: String) throws(BoltError) -> Method {
        let parameters = try parseParameters()
        guard try peek().isPunctuation("{") else { throw error(invalid, at: nameToken) }
        let body = try parseBody()
        let separator = try peek()
        if separator.isPunctuation(";") || separator.isPunctuation(",") {
            try advance()
            warn("Extra separator (\(separator.quoted)) after the body of method '\(name)' is not needed", at: separator.location)
        }
        return Method(name: name, parameters: parameters, body: body, location: nameToken.location)
    }

    private mutating func add(_ method: Method, to table: inout MethodTable) throws(BoltError) {
        if table[method.name] != nil {
            throw BoltError(.parse, "Duplicated method definition: \(method.name).", at: method.location)
        }
        table.add(method)
    }

    // MARK: Types

    /// `type Name[<T, ...>] [extends Type] ({ members } | ;)`
    private mutating func parseType() throws(BoltError) {
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

    // MARK: Paths

    /// A path statement from its template on (the `path` keyword, if any, is consumed). The statement is
    /// registered before the statements nested in it, so its rules come before its children's in the
    /// output, as in Bolt 0.8.4's samples.
    private mutating func parsePath(parent: [PathPart], at start: Token) throws(BoltError) {
        try nested { parser throws(BoltError) in try parser.parsePathStatement(parent: parent, at: start) }
    }

    private mutating func parsePathStatement(parent: [PathPart], at start: Token) throws(BoltError) {
        let index = program.paths.count
        let parts = parent + (try parsePathTemplate(after: start))
        var type = TypeExpression.simple("Any")
        if try peek().isIdentifier("is") {
            try advance()
            type = try parseTypeExpression()
        }
        var methods = MethodTable()
        let bodyStart = try peek()
        if bodyStart.isPunctuation("{") {
            try advance()
            while !(try accept("}")) {
                let token = try peek()
                switch token.kind {
                case .identifier("path"):
                    try advance()
                    try parsePath(parent: parts, at: token)
                case .punctuation("/"):
                    try parsePath(parent: parts, at: token)
                case .identifier(let name):
                    try advance()
                    guard try peek().isPunctuation("(") else {
                        throw error("Invalid path or method: \(token.quoted)", at: token)
                    }
                    let method = try parseMethod(name: name, at: token, invalid: "Invalid path or method: missing body of '\(name)'")
                    try add(method, to: &methods)
                case .punctuation(";"), .punctuation(","):
                    try advance()
                    warn("Extra separator (\(token.quoted)) in a path body is not needed", at: token.location)
                case .end:
                    throw error("Missing '}' at the end of the path statement", at: token)
                default:
                    throw error("Invalid path or method: \(token.quoted)", at: token)
                }
            }
        } else if !(try accept(";")) {
            throw error("Missing body of path statement; expected '{' or ';' but found \(bodyStart.quoted)", at: bodyStart)
        }
        program.paths.insert(PathStatement(parts: parts, type: type, methods: methods, location: start.location), at: index)
    }

    /// The template after `path` (or starting at the statement's `/`): `/`, `/a/{b}/c`, `/a/{b=*}`.
    private mutating func parsePathTemplate(after start: Token) throws(BoltError) -> [PathPart] {
        var offset: Int
        if start.isPunctuation("/") {
            offset = start.offset
        } else {
            rewind(to: lexer.position)
            lexer.skipWhitespace()
            offset = lexer.position
        }
        guard lexer.scalar(at: offset) == "/" else {
            rewind(to: offset)
            throw BoltError(.parse, "Missing Path Template in path statement", at: lexer.location(at: offset))
        }
        var parts: [PathPart] = []
        offset += 1
        if Self.endsTemplate(lexer.scalar(at: offset)) {
            rewind(to: offset)
            return parts
        }
        while true {
            let segmentStart = offset
            guard let first = lexer.scalar(at: offset) else { break }
            if first == "/" {
                throw BoltError(.parse, "Paths may not contain an empty part", at: lexer.location(at: offset))
            }
            if first == "{" {
                var end = offset + 1
                while let scalar = lexer.scalar(at: end), scalar != "}", scalar != "\n" { end += 1 }
                guard lexer.scalar(at: end) == "}" else {
                    throw BoltError(.parse, "Missing '}' in path capture", at: lexer.location(at: offset))
                }
                var inside = String(String.UnicodeScalarView(lexer.scalars[(offset + 1)..<end]))
                if let equals = inside.firstIndex(of: "=") {
                    let wildcard = inside[inside.index(after: equals)...].filter { !$0.isWhitespace }
                    guard wildcard == "*" else {
                        throw BoltError(.parse, "Invalid path capture (only {name} and {name=*} are allowed)", at: lexer.location(at: offset))
                    }
                    inside = String(inside[..<equals])
                }
                var name = inside.filter { !$0.isWhitespace }
                if name.hasPrefix("$") { name.removeFirst() }
                guard !name.isEmpty, Expression.isIdentifier(name) else {
                    throw BoltError(.parse, "Invalid path capture name '\(inside)'", at: lexer.location(at: offset))
                }
                parts.append(PathPart(label: "$" + name, variable: name))
                offset = end + 1
            } else {
                while let scalar = lexer.scalar(at: offset), !Self.endsTemplate(scalar), scalar != "/", scalar != "{" {
                    offset += 1
                }
                let label = String(String.UnicodeScalarView(lexer.scalars[segmentStart..<offset]))
                if label.hasPrefix("$") {
                    let variable = String(label.dropFirst())
                    warn("The \(label) path segment is deprecated; write {\(variable)} to capture a key", at: lexer.location(at: segmentStart))
                    parts.append(PathPart(label: label, variable: variable))
                } else {
                    parts.append(PathPart(label: label, variable: nil))
                }
            }
            guard lexer.scalar(at: offset) == "/" else { break }
            offset += 1
            if Self.endsTemplate(lexer.scalar(at: offset)) {
                throw BoltError(.parse, "Paths may not end in a slash (/)", at: lexer.location(at: offset - 1))
            }
        }
        rewind(to: offset)
        return parts
    }

    /// Whitespace, `;`, `}` or the end of the source end a path template (a `{` right after a `/` is a capture).
    private static func endsTemplate(_ scalar: Unicode.Scalar?) -> Bool {
        guard let scalar else { return true }
        return scalar.properties.isWhitespace || scalar == ";" || scalar == "}"
    }
}
