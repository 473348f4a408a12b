/// Why a rules document was rejected: the place in the source and what is wrong there.
///
/// Lines and columns count from 1; columns count Unicode scalars. `text` is the offending piece of
/// source (a key, a token or a whole expression) so messages can quote it.
///
///     do { _ = try RuleSet(source: #"{"rules": {".red": true}}"#) }
///     catch { print(error) }   // line 1, column 12: Unknown rule property '.red' ...
public struct RulesError: Error, Sendable, Hashable, CustomStringConvertible {
    public let line: Int
    public let column: Int
    public let message: String
    /// The offending source text, possibly empty (for example at the end of the input).
    public let text: String

    public init(line: Int, column: Int, message: String, text: String = "") {
        self.line = line
        self.column = column
        self.message = message
        self.text = text
    }

    init(at position: SourcePosition, _ message: String, text: String = "") {
        self.init(line: position.line, column: position.column, message: message, text: text)
    }

    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A place in the rules source: 1-based line and column.
struct SourcePosition: Sendable, Hashable {
    var line: Int
    var column: Int

    static let start = SourcePosition(line: 1, column: 1)
}
