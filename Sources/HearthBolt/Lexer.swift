/// One token of Bolt source.
struct Token: Sendable {
    enum Kind: Hashable, Sendable {
        case identifier(String)
        case number(Double)
        case string(String)
        /// An operator or delimiter: `(`, `==`, `&&`, `|`, ...
        case punctuation(String)
        case end
    }

    var kind: Kind
    /// Index of the token's first scalar in the source, so the parser can rescan from it (regular
    /// expressions and path templates are lexed differently from the rest).
    var offset: Int
    var location: SourceLocation

    func isPunctuation(_ text: String) -> Bool { kind == .punctuation(text) }

    func isIdentifier(_ name: String) -> Bool { kind == .identifier(name) }

    /// How the token reads in an error message.
    var quoted: String {
        switch kind {
        case .identifier(let name): "'\(name)'"
        case .number(let value): "'\(JavaScriptNumber.format(value))'"
        case .string(let value): RulesString.quoted(value)
        case .punctuation(let text): "'\(text)'"
        case .end: "the end of the file"
        }
    }
}

/// Turns Bolt source into tokens on demand.
///
/// The parser drives it one token at a time because a `/` means division, the start of a regular
/// expression or the start of a path template depending on where it appears.
struct Lexer {
    let scalars: [Unicode.Scalar]
    private(set) var position = 0
    private let lineStarts: [Int]

    init(_ source: String) {
        scalars = Array(source.unicodeScalars)
        var starts = [0]
        for (index, scalar) in scalars.enumerated() where scalar == "\n" {
            starts.append(index + 1)
        }
        lineStarts = starts
    }

    func location(at offset: Int) -> SourceLocation {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return SourceLocation(line: low + 1, column: offset - lineStarts[low] + 1)
    }

    var currentLocation: SourceLocation { location(at: position) }

    func scalar(at offset: Int) -> Unicode.Scalar? { offset < scalars.count ? scalars[offset] : nil }

    mutating func reset(to offset: Int) { position = offset }

    func error(_ message: String, at offset: Int) -> BoltError {
        BoltError(.parse, message, at: location(at: offset))
    }

    // MARK: Trivia

    /// Skips whitespace and `//` and `/* */` comments.
    mutating func skipTrivia() throws(BoltError) {
        while let scalar = scalar(at: position) {
            if scalar.properties.isWhitespace {
                position += 1
            } else if scalar == "/", self.scalar(at: position + 1) == "/" {
                while let next = self.scalar(at: position), next != "\n" { position += 1 }
            } else if scalar == "/", self.scalar(at: position + 1) == "*" {
                let start = position
                position += 2
                while true {
                    guard let next = self.scalar(at: position) else {
                        throw error("Unterminated comment", at: start)
                    }
                    if next == "*", self.scalar(at: position + 1) == "/" {
                        position += 2
                        break
                    }
                    position += 1
                }
            } else {
                return
            }
        }
    }

    /// Skips spaces and tabs and line breaks only (not comments): path templates may contain `//`.
    mutating func skipWhitespace() {
        while let scalar = scalar(at: position), scalar.properties.isWhitespace { position += 1 }
    }

    // MARK: Tokens

    private static let punctuation: [String] = [
        "===", "!==", "==", "!=", "<=", ">=", "&&", "||",
        "(", ")", "{", "}", "[", "]", "<", ">", "=", "!", "?", ":", ",", ";", ".", "+", "-", "*", "/", "%", "|",
    ]

    mutating func next() throws(BoltError) -> Token {
        try skipTrivia()
        let start = position
        let location = self.location(at: start)
        guard let scalar = scalar(at: position) else { return Token(kind: .end, offset: start, location: location) }

        if scalar.isASCIILetter || scalar == "_" || scalar == "$" {
            while let next = self.scalar(at: position), next.isASCIILetter || next.isASCIIDigit || next == "_" || next == "$" {
                position += 1
            }
            return Token(kind: .identifier(text(from: start)), offset: start, location: location)
        }
        if scalar.isASCIIDigit || (scalar == "." && self.scalar(at: position + 1)?.isASCIIDigit == true) {
            return Token(kind: .number(try number()), offset: start, location: location)
        }
        if scalar == "'" || scalar == "\"" {
            return Token(kind: .string(try string()), offset: start, location: location)
        }
        for candidate in Self.punctuation where matches(candidate) {
            position += candidate.unicodeScalars.count
            return Token(kind: .punctuation(candidate), offset: start, location: location)
        }
        throw error("Unexpected character '\(scalar.escaped(asASCII: true))'", at: start)
    }

    private func matches(_ candidate: String) -> Bool {
        var offset = position
        for scalar in candidate.unicodeScalars {
            guard self.scalar(at: offset) == scalar else { return false }
            offset += 1
        }
        return true
    }

    private func text(from start: Int) -> String {
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars[start..<position])
        return text
    }

    /// Decimal (`12`, `1.5`, `.5`, `2e3`) or hexadecimal (`0x1F`) number.
    private mutating func number() throws(BoltError) -> Double {
        let start = position
        if scalar(at: position) == "0", scalar(at: position + 1) == "x" || scalar(at: position + 1) == "X" {
            position += 2
            var value: Double = 0
            var digits = 0
            while let next = scalar(at: position), let digit = Int(String(next), radix: 16) {
                value = value * 16 + Double(digit)
                position += 1
                digits += 1
            }
            if digits == 0 { throw error("Invalid hexadecimal number", at: start) }
            return value
        }
        while scalar(at: position)?.isASCIIDigit == true { position += 1 }
        if scalar(at: position) == ".", scalar(at: position + 1)?.isASCIIDigit == true {
            position += 1
            while scalar(at: position)?.isASCIIDigit == true { position += 1 }
        }
        if scalar(at: position) == "e" || scalar(at: position) == "E" {
            var offset = position + 1
            if scalar(at: offset) == "+" || scalar(at: offset) == "-" { offset += 1 }
            if scalar(at: offset)?.isASCIIDigit == true {
                position = offset
                while scalar(at: position)?.isASCIIDigit == true { position += 1 }
            }
        }
        guard let value = Double(text(from: start)) else { throw error("Invalid number", at: start) }
        return value
    }

    /// A quoted string with JavaScript escapes; any other escaped character stands for itself.
    private mutating func string() throws(BoltError) -> String {
        let start = position
        let quote = scalars[position]
        position += 1
        var value = String.UnicodeScalarView()
        while true {
            guard let scalar = scalar(at: position), scalar != "\n" else {
                throw error("Unterminated string", at: start)
            }
            position += 1
            if scalar == quote { break }
            guard scalar == "\\" else {
                value.append(scalar)
                continue
            }
            guard let escaped = self.scalar(at: position) else { throw error("Unterminated string", at: start) }
            position += 1
            switch escaped {
            case "b": value.append("\u{08}")
            case "f": value.append("\u{0C}")
            case "n": value.append("\n")
            case "r": value.append("\r")
            case "t": value.append("\t")
            case "v": value.append("\u{0B}")
            case "0": value.append("\u{00}")
            case "\n": break  // A line continuation.
            case "x", "u":
                let count = escaped == "x" ? 2 : 4
                var code: UInt32 = 0
                for _ in 0..<count {
                    guard let digit = self.scalar(at: position).flatMap({ UInt32(String($0), radix: 16) }) else {
                        throw error("Invalid \\\(escaped) escape in string", at: position)
                    }
                    code = code * 16 + digit
                    position += 1
                }
                value.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default: value.append(escaped)
            }
        }
        return String(value)
    }

    /// A regular expression literal starting at the current `/`: the body is kept verbatim, escapes included.
    mutating func regularExpression() throws(BoltError) -> Expression.Node {
        let start = position
        position += 1
        var body = String.UnicodeScalarView()
        while true {
            guard let scalar = scalar(at: position), scalar != "\n" else {
                throw error("Unterminated regular expression", at: start)
            }
            position += 1
            if scalar == "/" { break }
            body.append(scalar)
            if scalar == "\\", let escaped = self.scalar(at: position), escaped != "\n" {
                body.append(escaped)
                position += 1
            }
        }
        let flagsStart = position
        while let scalar = scalar(at: position), scalar.isASCIILetter { position += 1 }
        let flags = text(from: flagsStart)
        if flags != "" && flags != "i" {
            throw error("Unsupported RegExp modifier: \(flags)", at: flagsStart)
        }
        return .regularExpression(body: String(body), flags: flags)
    }
}
