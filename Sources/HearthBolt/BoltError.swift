/// A position in Bolt source text: 1-based line and column (columns count Unicode scalars).
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}

/// Why a Bolt source could not be compiled: the first syntax or generation error, with where it was found.
///
/// `description` reads `line:column: message` (or just the message when no position applies, such as a
/// file without any `path` statement), so a command line tool can prefix the file name.
public struct BoltError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The compiler stage that rejected the source.
    public enum Stage: Hashable, Sendable {
        /// The text is not valid Bolt syntax.
        case parse
        /// The syntax is valid but the rules cannot be generated (unknown type, recursive function, ...).
        case generate
    }

    public let stage: Stage
    /// English text in the wording of Firebase's Bolt compiler where one exists.
    public let message: String
    /// Where in the source the problem is, when it can be tied to one place.
    public let location: SourceLocation?

    public init(_ stage: Stage, _ message: String, at location: SourceLocation?) {
        self.stage = stage
        self.message = message
        self.location = location
    }

    public var description: String {
        guard let location else { return message }
        return "\(location): \(message)"
    }
}

/// Something the compiler accepted but that deserves attention (deprecated syntax, ignored methods).
public struct BoltWarning: Hashable, Sendable, CustomStringConvertible {
    public let message: String
    public let location: SourceLocation?

    public init(_ message: String, at location: SourceLocation?) {
        self.message = message
        self.location = location
    }

    public var description: String {
        guard let location else { return message }
        return "\(location): \(message)"
    }
}
