/// Printing expressions as rules-language text (bolt.md §6.4).
///
/// Operators get the minimal parentheses JavaScript precedence needs, with two deliberate exceptions that
/// Firebase's Bolt compiler makes and Hearth reproduces so compiled rules read the same: a right operand of
/// equal precedence is parenthesised (`a + (b + c)`), and every binary `&&` / `||` is parenthesised once,
/// even at the top level (`"(a && b)"`).
extension Expression {
    /// The rules-language text of this expression.
    var rulesText: String { printed(outerPrecedence: 0) }

    private var precedence: Int {
        switch node {
        case .unary: 15
        case .binary(let op, _, _): op.precedence
        case .conditional: 4
        case .call, .reference: 18
        default: 19
        }
    }

    private func printed(outerPrecedence: Int) -> String {
        let inner = precedence
        var text: String
        switch node {
        case .boolean(let value): text = value ? "true" : "false"
        case .number(let value): text = JavaScriptNumber.format(value)
        case .string(let value): text = RulesString.quoted(value)
        case .regularExpression(let body, let flags): text = "/\(body)/\(flags)"
        case .null: text = "null"
        case .array(let elements): text = "[" + elements.map(\.rulesText).joined(separator: ", ") + "]"
        case .variable(let name), .literal(let name): text = name
        case .reference(let base, let accessor):
            if let name = accessor.stringValue, Self.isIdentifier(name) {
                text = base.printed(outerPrecedence: inner) + "." + name
            } else {
                text = base.printed(outerPrecedence: inner) + "[" + accessor.rulesText + "]"
            }
        case .call(let callee, let arguments):
            text = callee.rulesText + "(" + arguments.map(\.rulesText).joined(separator: ", ") + ")"
        case .unary(let op, let operand):
            text = op.symbol + operand.printed(outerPrecedence: inner)
        case .binary(let op, let left, let right):
            text = left.printed(outerPrecedence: inner) + " " + op.symbol + " " + right.printed(outerPrecedence: inner + 1)
            if op == .and || op == .or { return "(" + text + ")" }
        case .conditional(let condition, let then, let otherwise):
            text = condition.printed(outerPrecedence: inner) + " ? " + then.printed(outerPrecedence: inner) + " : "
                + otherwise.printed(outerPrecedence: inner)
        }
        if inner < outerPrecedence { text = "(" + text + ")" }
        return text
    }

    /// Names printed with dot syntax: `[A-Za-z_$][A-Za-z0-9_]*` (a `$` only first, as Bolt does).
    static func isIdentifier(_ name: String) -> Bool {
        var scalars = name.unicodeScalars.makeIterator()
        guard let first = scalars.next(), first.isASCIILetter || first == "_" || first == "$" else { return false }
        while let scalar = scalars.next() {
            guard scalar.isASCIILetter || scalar.isASCIIDigit || scalar == "_" else { return false }
        }
        return true
    }
}

extension Unicode.Scalar {
    var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// Single-quoted string literals as Bolt writes them into rules.
enum RulesString {
    /// `'text'` with `'` and `\` escaped, `\b \t \n \f \r` for those controls, and `\uXXXX` (lowercase hex,
    /// one per UTF-16 unit) for other controls and everything from U+007F up, so rules stay ASCII.
    static func quoted(_ value: String) -> String {
        var text = "'"
        for unit in value.utf16 {
            switch unit {
            case 0x27: text += "\\'"
            case 0x5C: text += "\\\\"
            case 0x08: text += "\\b"
            case 0x09: text += "\\t"
            case 0x0A: text += "\\n"
            case 0x0C: text += "\\f"
            case 0x0D: text += "\\r"
            case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return text + "'"
    }
}

/// Numbers printed the way JavaScript's `JSON.stringify` prints them (`2`, `1.1`, `1e+21`, `1e-7`).
enum JavaScriptNumber {
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }  // JSON.stringify's answer for NaN and infinities.
        if value == 0 { return "0" }
        if value.rounded() == value, abs(value) < 1e21 {
            if abs(value) < 9.0e18 { return String(Int64(value)) }
            return integralDigits(value)
        }
        let magnitude = abs(value)
        if magnitude >= 1e-6, magnitude < 1e21 {
            // Swift switches to exponent notation earlier than JavaScript; write those values out in full.
            let text = "\(value)"
            return text.contains("e") ? expanded(text) : text
        }
        return jsExponent("\(value)")
    }

    /// Swift writes `1e-07` and `1e+22`; JavaScript writes `1e-7` and `1e+22`.
    private static func jsExponent(_ text: String) -> String {
        guard let e = text.firstIndex(of: "e") else { return text }
        let mantissa = text[..<e]
        var exponent = text[text.index(after: e)...]
        var sign = "+"
        if exponent.first == "-" || exponent.first == "+" {
            sign = String(exponent.first!)
            exponent = exponent.dropFirst()
        }
        let digits = exponent.drop(while: { $0 == "0" })
        return mantissa + "e" + sign + (digits.isEmpty ? "0" : digits)
    }

    /// Positional notation for a Swift exponent form such as `1e-05` or `1.5e+17`.
    private static func expanded(_ text: String) -> String {
        guard let e = text.firstIndex(of: "e"), let exponent = Int(text[text.index(after: e)...]) else { return text }
        var mantissa = String(text[..<e])
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa.removeFirst() }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let whole = String(parts[0])
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        let digits = whole + fraction
        let point = whole.count + exponent
        var result: String
        if point <= 0 {
            result = "0." + String(repeating: "0", count: -point) + digits
        } else if point >= digits.count {
            result = digits + String(repeating: "0", count: point - digits.count)
        } else {
            result = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
        }
        return (negative ? "-" : "") + result
    }

    private static func integralDigits(_ value: Double) -> String {
        expanded("\(value)")
    }
}
