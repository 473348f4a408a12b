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
    mutating func parseMethod(name: String, at nameToken: Token, invalid: String) throws(BoltError) -> Method {
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

    mutating func add(_ method: Method, to table: inout MethodTable) throws(BoltError) {
        if table[method.name] != nil {
            throw BoltError(.parse, "Duplicated method definition: \(method.name).", at: method.location)
        }
        table.add(method)
    }
}
