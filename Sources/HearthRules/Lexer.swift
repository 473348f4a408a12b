/// Splits a rule expression into tokens (docs/rules.md §5.1).
///
/// A `/` starts a regular-expression literal where an operand is expected (after an operator,
/// `(`, `[`, `,` or at the start) and is division elsewhere: JavaScript's rule.
struct Lexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var previous: Token.Kind?

    init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    /// Every token, ending with `.end`.
    static func tokenize(_ scalars: [Unicode.Scalar]) throws(ExpressionError) -> [Token] {
        var lexer = Lexer(scalars)
        var tokens: [Token] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    /// Operators, longest first so `===` wins over `==` over `=`.
    private static let symbols: [String] = [
        "===", "!==", "==", "!=", "<=", ">=", "&&", "||",
        ".", "(", ")", "[", "]", ",", "?", ":", "!", "-", "+", "*", "/", "%", "<", ">",
    ]

    /// Characters Firebase rejects as operators, with the reason given.
    private static let rejected: [String: String] = [
        "**": "The exponent operator '**' is not supported in rules.",
        "=": "Assignment '=' is not allowed in rules; use '==' to compare.",
        "&": "Bitwise '&' is not an operator in rules; use '&&'.",
        "|": "Bitwise '|' is not an operator in rules; use '||'.",
        ";": "Rules hold a single expression: ';' is not allowed.",
    ]

    private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    /// True when the previous token ends an operand, so `/` divides.
    private var afterOperand: Bool {
        switch previous {
        case .number?, .string?, .identifier?, .regex?: return true
        case .symbol(let s)?: return s == ")" || s == "]"
        case .end?, nil: return false
        }
    }

    mutating func next() throws(ExpressionError) -> Token {
        while let c = current, c == " " || c == "\t" || c == "\n" || c == "\r" { index += 1 }
        let start = index
        guard let c = current else { return Token(kind: .end, start: start, end: start) }
        let kind: Token.Kind
        if Self.isIdentifierStart(c) {
            var name = String.UnicodeScalarView()
            while let d = current, Self.isIdentifierStart(d) || ("0"..."9").contains(d) {
                name.append(d)
                index += 1
            }
            kind = .identifier(String(name))
        } else if ("0"..."9").contains(c) || (c == "." && peek(1).map { ("0"..."9").contains($0) } == true) {
            kind = .number(try lexNumber())
        } else if c == "'" || c == "\"" {
            kind = .string(try lexString(quote: c))
        } else if c == "/" && !afterOperand {
            kind = try lexRegex()
        } else {
            kind = try lexSymbol()
        }
        previous = kind
        return Token(kind: kind, start: start, end: index)
    }

    static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        c == "_" || c == "$" || ("a"..."z").contains(c) || ("A"..."Z").contains(c)
    }

    private func startsWith(_ text: String) -> Bool {
        var i = index
        for s in text.unicodeScalars {
            guard i < scalars.count, scalars[i] == s else { return false }
            i += 1
        }
        return true
    }

    private mutating func lexSymbol() throws(ExpressionError) -> Token.Kind {
        if startsWith("**") { throw ExpressionError(offset: index, Self.rejected["**"]!, text: "**") }
        for symbol in Self.symbols where startsWith(symbol) {
            index += symbol.unicodeScalars.count
            return .symbol(symbol)
        }
        let c = current!
        if let reason = Self.rejected[String(c)] { throw ExpressionError(offset: index, reason, text: String(c)) }
        throw ExpressionError(offset: index, "Unexpected character '\(c)'.", text: String(c))
    }

    private mutating func lexNumber() throws(ExpressionError) -> Double {
        let start = index
        if current == "0", let x = peek(1), x == "x" || x == "X" {
            index += 2
            var value = 0.0
            var digits = 0
            while let d = current, let v = d.hexDigitValue {
                value = value * 16 + Double(v)
                digits += 1
                index += 1
            }
            if digits == 0 { throw ExpressionError(offset: start, "Invalid hexadecimal number.", text: "0x") }
            return value
        }
        var text = ""
        func digits() {
            while let d = current, ("0"..."9").contains(d) {
                text.unicodeScalars.append(d)
                index += 1
            }
        }
        digits()
        if current == "." {
            text += "."
            index += 1
            digits()
        }
        if let e = current, e == "e" || e == "E" {
            text += "e"
            index += 1
            if let sign = current, sign == "+" || sign == "-" {
                text.unicodeScalars.append(sign)
                index += 1
            }
            digits()
        }
        if let d = current, Self.isIdentifierStart(d) {
            throw ExpressionError(offset: start, "Invalid number.", text: text + String(d))
        }
        if text.hasPrefix(".") { text = "0" + text }
        guard let value = Double(text) else { throw ExpressionError(offset: start, "Invalid number.", text: text) }
        return value
    }

    private mutating func lexString(quote: Unicode.Scalar) throws(ExpressionError) -> String {
        let start = index
        index += 1
        var result = String.UnicodeScalarView()
        while true {
            guard let c = current else { throw ExpressionError(offset: start, "Unterminated string literal.", text: String(quote)) }
            index += 1
            if c == quote { return String(result) }
            if c == "\n" { throw ExpressionError(offset: start, "Unterminated string literal.", text: String(quote)) }
            guard c == "\\" else {
                result.append(c)
                continue
            }
            guard let e = current else { throw ExpressionError(offset: start, "Unterminated string literal.", text: String(quote)) }
            let escapeStart = index - 1
            index += 1
            switch e {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "b": result.append("\u{8}")
            case "f": result.append("\u{C}")
            case "v": result.append("\u{B}")
            case "0": result.append("\u{0}")
            case "x", "u":
                let count = e == "x" ? 2 : 4
                var value: UInt32 = 0
                for _ in 0..<count {
                    guard let d = current, let v = d.hexDigitValue else {
                        throw ExpressionError(offset: escapeStart, "Invalid '\\\(e)' escape.", text: "\\\(e)")
                    }
                    value = value * 16 + UInt32(v)
                    index += 1
                }
                guard let scalar = Unicode.Scalar(value) else {
                    throw ExpressionError(offset: escapeStart, "Invalid '\\\(e)' escape (surrogate).", text: "\\\(e)")
                }
                result.append(scalar)
            default:
                // JavaScript: any other escaped character stands for itself (\' \" \\ \/).
                result.append(e)
            }
        }
    }

    private mutating func lexRegex() throws(ExpressionError) -> Token.Kind {
        let start = index
        index += 1
        var pattern = String.UnicodeScalarView()
        var inSet = false
        while true {
            guard let c = current, c != "\n" else {
                throw ExpressionError(offset: start, "Unterminated regular expression literal.", text: "/")
            }
            index += 1
            if c == "\\" {
                guard let e = current else { throw ExpressionError(offset: start, "Unterminated regular expression literal.", text: "/") }
                pattern.append(c)
                pattern.append(e)
                index += 1
                continue
            }
            if c == "[" { inSet = true } else if c == "]" { inSet = false } else if c == "/" && !inSet { break }
            pattern.append(c)
        }
        var flags = ""
        while let f = current, Self.isIdentifierStart(f) {
            flags.unicodeScalars.append(f)
            index += 1
        }
        return .regex(pattern: String(pattern), flags: flags)
    }
}

/// A problem in one expression, at a scalar offset into it; `RuleTree` turns it into a
/// `RulesError` at the matching place in the rules source.
struct ExpressionError: Error, Sendable {
    var offset: Int
    var message: String
    var text: String

    init(offset: Int, _ message: String, text: String = "") {
        self.offset = offset
        self.message = message
        self.text = text
    }
}
