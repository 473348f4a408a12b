/// Parses one rule expression (docs/rules.md §5) into an `Expression`, by precedence climbing.
struct Parser {
    private let tokens: [Token]
    private var position = 0
    private var depth = 0

    /// Parses a whole expression; anything left over is an error (`a; b`, `var x = 1`).
    static func parse(_ scalars: [Unicode.Scalar]) throws(ExpressionError) -> Expression {
        if scalars.count > RulesLimits.maxExpressionLength {
            throw ExpressionError(offset: 0, "The expression is longer than \(RulesLimits.maxExpressionLength) characters.")
        }
        var parser = Parser(tokens: try Lexer.tokenize(scalars))
        if parser.current.kind == .end { throw ExpressionError(offset: 0, "The rule expression is empty.") }
        let expression = try parser.parseExpression()
        if parser.current.kind != .end {
            throw ExpressionError(
                offset: parser.current.start, "Unexpected \(parser.current.display) after the end of the expression.",
                text: parser.current.display)
        }
        if expression.height > RulesLimits.maxExpressionDepth {
            throw ExpressionError(offset: 0, "The expression nests deeper than \(RulesLimits.maxExpressionDepth) levels.")
        }
        return expression
    }

    private init(tokens: [Token]) {
        self.tokens = tokens
    }

    private var current: Token { tokens[position] }

    private mutating func advance() -> Token {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    private mutating func expect(_ symbol: String) throws(ExpressionError) {
        guard current.isSymbol(symbol) else {
            throw ExpressionError(offset: current.start, "Expected '\(symbol)' but found \(current.display).", text: current.display)
        }
        _ = advance()
    }

    private mutating func nested<T>(_ body: (inout Parser) throws(ExpressionError) -> T) throws(ExpressionError) -> T {
        depth += 1
        defer { depth -= 1 }
        if depth > RulesLimits.maxExpressionDepth {
            throw ExpressionError(offset: current.start, "The expression nests deeper than \(RulesLimits.maxExpressionDepth) levels.")
        }
        return try body(&self)
    }

    /// conditional: binary ('?' conditional ':' conditional)?  — right-associative.
    mutating func parseExpression() throws(ExpressionError) -> Expression {
        try nested { (parser: inout Parser) throws(ExpressionError) -> Expression in
            let condition = try parser.parseBinary(minimumPrecedence: 0)
            guard parser.current.isSymbol("?") else { return condition }
            _ = parser.advance()
            let whenTrue = try parser.parseExpression()
            try parser.expect(":")
            let whenFalse = try parser.parseExpression()
            return .conditional(condition, whenTrue, whenFalse, offset: condition.offset)
        }
    }

    private mutating func parseBinary(minimumPrecedence: Int) throws(ExpressionError) -> Expression {
        var left = try parseUnary()
        while case .symbol(let symbol) = current.kind, let op = BinaryOperator(symbol: symbol), op.precedence > minimumPrecedence {
            _ = advance()
            let right = try nested { (parser: inout Parser) throws(ExpressionError) in
                try parser.parseBinary(minimumPrecedence: op.precedence)
            }
            left = .binary(op, left, right, offset: left.offset)
        }
        return left
    }

    private mutating func parseUnary() throws(ExpressionError) -> Expression {
        let token = current
        if token.isSymbol("!") || token.isSymbol("-") {
            _ = advance()
            let operand = try nested { (parser: inout Parser) throws(ExpressionError) in try parser.parseUnary() }
            return .unary(token.isSymbol("!") ? .not : .negate, operand, offset: token.start)
        }
        if token.isSymbol("+") {
            throw ExpressionError(offset: token.start, "Unary '+' is not supported in rules.", text: "+")
        }
        return try parsePostfix()
    }

    private mutating func parsePostfix() throws(ExpressionError) -> Expression {
        var expression = try parsePrimary()
        while true {
            let token = current
            if token.isSymbol(".") {
                _ = advance()
                guard case .identifier(let name) = current.kind else {
                    throw ExpressionError(offset: current.start, "Expected a name after '.' but found \(current.display).", text: current.display)
                }
                _ = advance()
                expression = .member(expression, name: name, offset: token.start + 1)
            } else if token.isSymbol("[") {
                _ = advance()
                let key = try parseExpression()
                try expect("]")
                expression = .index(expression, key: key, offset: token.start)
            } else if token.isSymbol("(") {
                _ = advance()
                var arguments: [Expression] = []
                if !current.isSymbol(")") {
                    while true {
                        arguments.append(try parseExpression())
                        if current.isSymbol(",") {
                            _ = advance()
                            continue
                        }
                        break
                    }
                }
                try expect(")")
                expression = .call(expression, arguments: arguments, offset: expression.offset)
            } else {
                return expression
            }
        }
    }

    private mutating func parsePrimary() throws(ExpressionError) -> Expression {
        let token = advance()
        switch token.kind {
        case .number(let value): return .number(value, offset: token.start)
        case .string(let value): return .string(value, offset: token.start)
        case .regex(let pattern, let flags): return .regex(pattern: pattern, flags: flags, offset: token.start)
        case .identifier(let name):
            switch name {
            case "true": return .boolean(true, offset: token.start)
            case "false": return .boolean(false, offset: token.start)
            case "null": return .null(offset: token.start)
            case "var", "let", "const", "function", "return", "new", "typeof", "this", "undefined":
                throw ExpressionError(offset: token.start, "'\(name)' is not allowed in rules: a rule is a single expression.", text: name)
            default: return .variable(name, offset: token.start)
            }
        case .symbol("("):
            let inner = try parseExpression()
            try expect(")")
            return inner
        case .symbol("["):
            var elements: [Expression] = []
            if !current.isSymbol("]") {
                while true {
                    elements.append(try parseExpression())
                    if current.isSymbol(",") {
                        _ = advance()
                        continue
                    }
                    break
                }
            }
            try expect("]")
            return .array(elements, offset: token.start)
        case .end:
            throw ExpressionError(offset: token.start, "Unexpected end of expression.")
        case .symbol(let s):
            throw ExpressionError(offset: token.start, "Unexpected '\(s)'.", text: s)
        }
    }
}
