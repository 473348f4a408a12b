/// `path` statements, their templates and their bodies.
extension Parser {
    /// A path statement from its template on (the `path` keyword, if any, is consumed). The statement is
    /// registered before the statements nested in it, so its rules come before its children's in the
    /// output, as in Bolt 0.8.4's samples.
    mutating func parsePath(parent: [PathPart], at start: Token) throws(BoltError) {
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
