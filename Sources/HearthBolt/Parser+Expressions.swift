/// Expressions, with JavaScript's precedence: `?:`, `||`, `&&`, equality, relational, additive,
/// multiplicative, unary, then member access, indexing and calls.
extension Parser {
    mutating func parseExpression() throws(BoltError) -> Expression {
        try nested { parser throws(BoltError) in try parser.parseConditional() }
    }

    private mutating func parseConditional() throws(BoltError) -> Expression {
        let condition = try parseBinary(level: 0)
        guard try accept("?") else { return condition }
        let then = try parseExpression()
        _ = try expect(":", "Expected ':' in a conditional expression")
        let otherwise = try parseExpression()
        return Expression(.conditional(condition, then, otherwise))
    }

    /// Binary operator levels from loosest to tightest; `and`/`or` are word forms of `&&`/`||`, and `===`
    /// and `!==` mean `==` and `!=`.
    private static let levels: [[String: BinaryOperator]] = [
        ["||": .or, "or": .or],
        ["&&": .and, "and": .and],
        ["==": .equal, "===": .equal, "!=": .notEqual, "!==": .notEqual],
        ["<": .less, "<=": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual],
        ["+": .add, "-": .subtract],
        ["*": .multiply, "/": .divide, "%": .remainder],
    ]

    private mutating func parseBinary(level: Int) throws(BoltError) -> Expression {
        guard level < Self.levels.count else { return try parseUnary() }
        var left = try parseBinary(level: level + 1)
        while true {
            let token = try peek()
            let symbol: String
            switch token.kind {
            case .punctuation(let text): symbol = text
            case .identifier(let word) where word == "and" || word == "or": symbol = word
            default: return left
            }
            if symbol == "=" { throw error(Self.equalityMessage, at: token) }
            guard let op = Self.levels[level][symbol] else { return left }
            try advance()
            let right = try parseBinary(level: level + 1)
            left = try checkHeight(.binary(op, left, right), at: token)
        }
    }

    private mutating func parseUnary() throws(BoltError) -> Expression {
        try nested { parser throws(BoltError) in try parser.parsePrefixed() }
    }

    /// Fails when `expression` is taller than ``BoltLimits/expressionHeightMax``.
    private func checkHeight(_ expression: Expression, at token: Token) throws(BoltError) -> Expression {
        guard expression.height <= BoltLimits.expressionHeightMax else {
            throw error("Expression deeper than \(BoltLimits.expressionHeightMax) levels is not supported", at: token)
        }
        return expression
    }

    private mutating func parsePrefixed() throws(BoltError) -> Expression {
        let token = try peek()
        if token.isPunctuation("!") {
            try advance()
            return Expression(.unary(.not, try parseUnary()))
        }
        if token.isPunctuation("-") || token.isPunctuation("+") {
            try advance()
            // A sign written against a number is part of the literal: `-3` is the number -3.
            let next = lexer.scalar(at: token.offset + 1)
            if next?.isASCIIDigit == true || next == ".", case .number(let value) = try peek().kind {
                try advance()
                return try parsePostfix(Expression(.number(token.isPunctuation("-") ? -value : value)), start: token)
            }
            let operand = try parseUnary()
            return token.isPunctuation("-") ? Expression(.unary(.negate, operand)) : operand
        }
        return try parsePostfix(try parsePrimary(), start: token)
    }

    private mutating func parsePostfix(_ base: Expression, start: Token) throws(BoltError) -> Expression {
        var expression = base
        while true {
            let token = try peek()
            if token.isPunctuation(".") {
                try advance()
                let name = try advance()
                guard case .identifier(let identifier) = name.kind else {
                    throw error("Expected a property name after '.'; found \(name.quoted)", at: name)
                }
                expression = try checkHeight(.member(expression, identifier), at: name)
            } else if token.isPunctuation("[") {
                try advance()
                let accessor = try parseExpression()
                _ = try expect("]", "Expected ']'")
                expression = try checkHeight(Expression(.reference(base: expression, accessor: accessor)), at: token)
            } else if token.isPunctuation("(") {
                try advance()
                var arguments: [Expression] = []
                if !(try accept(")")) {
                    while true {
                        arguments.append(try parseExpression())
                        if try accept(")") { break }
                        _ = try expect(",", "Expected ',' or ')' in the argument list")
                    }
                }
                expression = try checkHeight(.call(expression, arguments, location: start.location), at: token)
            } else {
                return expression
            }
        }
    }

    private mutating func parsePrimary() throws(BoltError) -> Expression {
        let token = try peek()
        switch token.kind {
        case .number(let value):
            try advance()
            return Expression(.number(value))
        case .string(let value):
            try advance()
            return .string(value)
        case .identifier(let name):
            try advance()
            switch name {
            case "true": return .true
            case "false": return .false
            case "null": return Expression(.null)
            default: return Expression(.variable(name), location: token.location)
            }
        case .punctuation("("):
            try advance()
            let inner = try parseExpression()
            _ = try expect(")", "Expected ')'")
            return inner
        case .punctuation("["):
            try advance()
            var elements: [Expression] = []
            if !(try accept("]")) {
                while true {
                    elements.append(try parseExpression())
                    if try accept("]") { break }
                    _ = try expect(",", "Expected ',' or ']' in the array")
                }
            }
            return Expression(.array(elements))
        case .punctuation("/"):
            rewind(to: token.offset)
            return Expression(try lexer.regularExpression())
        default:
            throw error("Expected an expression; found \(token.quoted)", at: token)
        }
    }
}
