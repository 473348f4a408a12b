/// The rules document as JSON with positions, read by `RulesJSONParser`.
///
/// HearthCore's data parser is strict RFC 8259 and keeps no positions; rules need both comments
/// (Firebase accepts `//` and `/* */` in deployed rules) and a line and column for every error.
struct RulesJSON {
    enum Kind {
        case null
        case bool(Bool)
        case number(Double)
        /// The decoded string, with the source position of each of its Unicode scalars (and one
        /// past the last), so an expression error can point into the source exactly.
        case string(String, scalarPositions: [SourcePosition])
        case array([RulesJSON])
        /// Members in source order.
        case object([Member])
    }

    struct Member {
        var key: String
        var keyPosition: SourcePosition
        var value: RulesJSON
    }

    var kind: Kind
    var position: SourcePosition

    /// A short name of the value's type for messages.
    var typeName: String {
        switch kind {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Reads JSON with `//` and `/* */` comments into `RulesJSON`. Duplicate keys are an error
/// (JSON leaves them undefined; a rules file with two `.write` keys is a mistake worth naming).
struct RulesJSONParser {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var column = 1
    private var depth = 0

    init(_ source: String) {
        scalars = Array(source.unicodeScalars)
    }

    static func parse(_ source: String) throws(RulesError) -> RulesJSON {
        var parser = RulesJSONParser(source)
        try parser.skipTrivia()
        let value = try parser.parseValue()
        try parser.skipTrivia()
        if parser.index < parser.scalars.count {
            throw RulesError(at: parser.position, "Unexpected text after the JSON document.", text: parser.excerpt())
        }
        return value
    }

    private var position: SourcePosition { SourcePosition(line: line, column: column) }

    private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private mutating func advance() {
        if scalars[index] == "\n" {
            line += 1
            column = 1
        } else {
            column += 1
        }
        index += 1
    }

    /// Up to 20 scalars of source from the current position, for error messages.
    private func excerpt() -> String {
        var text = ""
        var i = index
        while i < scalars.count, text.unicodeScalars.count < 20, scalars[i] != "\n" {
            text.unicodeScalars.append(scalars[i])
            i += 1
        }
        return text
    }

    private mutating func skipTrivia() throws(RulesError) {
        while let c = current {
            if c == " " || c == "\t" || c == "\n" || c == "\r" {
                advance()
            } else if c == "/" && index + 1 < scalars.count && scalars[index + 1] == "/" {
                while let d = current, d != "\n" { advance() }
            } else if c == "/" && index + 1 < scalars.count && scalars[index + 1] == "*" {
                let start = position
                advance()
                advance()
                while true {
                    guard let d = current else { throw RulesError(at: start, "Unterminated /* comment.", text: "/*") }
                    if d == "*" && index + 1 < scalars.count && scalars[index + 1] == "/" {
                        advance()
                        advance()
                        break
                    }
                    advance()
                }
            } else {
                return
            }
        }
    }

    private mutating func parseValue() throws(RulesError) -> RulesJSON {
        let start = position
        guard let c = current else { throw RulesError(at: start, "Unexpected end of the rules document.") }
        switch c {
        case "{": return try parseObject()
        case "[": return try parseArray()
        case "\"":
            let (string, positions) = try parseString()
            return RulesJSON(kind: .string(string, scalarPositions: positions), position: start)
        case "t", "f", "n":
            for (word, kind) in [("true", RulesJSON.Kind.bool(true)), ("false", .bool(false)), ("null", .null)] where matches(word) {
                for _ in word.unicodeScalars { advance() }
                return RulesJSON(kind: kind, position: start)
            }
            throw RulesError(at: start, "Invalid JSON value.", text: excerpt())
        case "-", "0"..."9":
            return RulesJSON(kind: .number(try parseNumber()), position: start)
        default:
            throw RulesError(at: start, "Invalid JSON value.", text: excerpt())
        }
    }

    private func matches(_ word: String) -> Bool {
        var i = index
        for s in word.unicodeScalars {
            guard i < scalars.count, scalars[i] == s else { return false }
            i += 1
        }
        // The word must end here, not run into more letters (`trueish`).
        if i < scalars.count, scalars[i].properties.isAlphabetic { return false }
        return true
    }

    private mutating func enter() throws(RulesError) {
        depth += 1
        if depth > RulesLimits.maxDocumentNesting {
            throw RulesError(at: position, "The rules document nests deeper than \(RulesLimits.maxDocumentNesting) levels.")
        }
    }

    private mutating func parseObject() throws(RulesError) -> RulesJSON {
        let start = position
        try enter()
        advance()  // {
        var members: [RulesJSON.Member] = []
        var seen = Set<String>()
        try skipTrivia()
        if current == "}" {
            advance()
            depth -= 1
            return RulesJSON(kind: .object(members), position: start)
        }
        while true {
            try skipTrivia()
            let keyPosition = position
            guard current == "\"" else { throw RulesError(at: keyPosition, "Expected a quoted key.", text: excerpt()) }
            let (key, _) = try parseString()
            if !seen.insert(key).inserted {
                throw RulesError(at: keyPosition, "Duplicate key '\(key)'.", text: key)
            }
            try skipTrivia()
            guard current == ":" else { throw RulesError(at: position, "Expected ':' after key '\(key)'.", text: excerpt()) }
            advance()
            try skipTrivia()
            let value = try parseValue()
            members.append(RulesJSON.Member(key: key, keyPosition: keyPosition, value: value))
            try skipTrivia()
            if current == "," {
                advance()
                continue
            }
            if current == "}" {
                advance()
                depth -= 1
                return RulesJSON(kind: .object(members), position: start)
            }
            throw RulesError(at: position, "Expected ',' or '}' in an object.", text: excerpt())
        }
    }

    private mutating func parseArray() throws(RulesError) -> RulesJSON {
        let start = position
        try enter()
        advance()  // [
        var elements: [RulesJSON] = []
        try skipTrivia()
        if current == "]" {
            advance()
            depth -= 1
            return RulesJSON(kind: .array(elements), position: start)
        }
        while true {
            try skipTrivia()
            elements.append(try parseValue())
            try skipTrivia()
            if current == "," {
                advance()
                continue
            }
            if current == "]" {
                advance()
                depth -= 1
                return RulesJSON(kind: .array(elements), position: start)
            }
            throw RulesError(at: position, "Expected ',' or ']' in an array.", text: excerpt())
        }
    }

    /// A string; raw newlines and tabs inside are accepted, as Firebase accepts multi-line rule strings.
    private mutating func parseString() throws(RulesError) -> (String, [SourcePosition]) {
        let start = position
        advance()  // "
        var result = String.UnicodeScalarView()
        var positions: [SourcePosition] = []
        while true {
            guard let c = current else { throw RulesError(at: start, "Unterminated string.", text: "\"") }
            let here = position
            if c == "\"" {
                positions.append(here)
                advance()
                return (String(result), positions)
            }
            if c == "\\" {
                advance()
                guard let e = current else { throw RulesError(at: start, "Unterminated string.", text: "\"") }
                let decoded: Unicode.Scalar
                switch e {
                case "\"": decoded = "\""
                case "\\": decoded = "\\"
                case "/": decoded = "/"
                case "b": decoded = "\u{8}"
                case "f": decoded = "\u{C}"
                case "n": decoded = "\n"
                case "r": decoded = "\r"
                case "t": decoded = "\t"
                case "u":
                    advance()
                    var code = try parseHex4(escapeAt: here)
                    if (0xD800...0xDBFF).contains(code), current == "\\", index + 1 < scalars.count, scalars[index + 1] == "u" {
                        advance()
                        advance()
                        let low = try parseHex4(escapeAt: here)
                        guard (0xDC00...0xDFFF).contains(low) else {
                            throw RulesError(at: here, "Invalid surrogate pair in a \\u escape.", text: "\\u")
                        }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else {
                        throw RulesError(at: here, "Invalid \\u escape (lone surrogate).", text: "\\u")
                    }
                    result.append(scalar)
                    positions.append(here)
                    continue
                default:
                    throw RulesError(at: here, "Invalid escape '\\\(e)' in a string.", text: "\\\(e)")
                }
                advance()
                result.append(decoded)
                positions.append(here)
                continue
            }
            if c.value < 0x20 && c != "\n" && c != "\t" && c != "\r" {
                throw RulesError(at: here, "Control character in a string.")
            }
            advance()
            result.append(c)
            positions.append(here)
        }
    }

    private mutating func parseHex4(escapeAt here: SourcePosition) throws(RulesError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let c = current, let digit = c.hexDigitValue else {
                throw RulesError(at: here, "Invalid \\u escape: expected four hex digits.", text: "\\u")
            }
            value = value * 16 + UInt32(digit)
            advance()
        }
        return value
    }

    private mutating func parseNumber() throws(RulesError) -> Double {
        let start = position
        var text = ""
        while let c = current, c == "-" || c == "+" || c == "." || c == "e" || c == "E" || ("0"..."9").contains(c) {
            text.unicodeScalars.append(c)
            advance()
        }
        guard let value = Double(text), value.isFinite else {
            throw RulesError(at: start, "Invalid number.", text: text)
        }
        return value
    }
}

extension Unicode.Scalar {
    /// The value of a hexadecimal digit, or nil.
    var hexDigitValue: Int? {
        switch value {
        case 0x30...0x39: return Int(value - 0x30)
        case 0x41...0x46: return Int(value - 0x41 + 10)
        case 0x61...0x66: return Int(value - 0x61 + 10)
        default: return nil
        }
    }
}
