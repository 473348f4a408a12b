import HearthBolt
import HearthCore
import HearthRules

/// Where a rules text fails to compile: line and column from 1, and why.
struct RulesProblem: Error, Equatable {
    var line: Int
    var column: Int
    var message: String

    var json: String {
        "{\"line\":\(line),\"column\":\(column),\"message\":\(Node(message).json())}"
    }
}

/// A rules text as the console's editor holds it: JSON (comments allowed) or Bolt, compiled to the JSON
/// the server enforces. Bolt errors carry Bolt's own positions; errors in the JSON Bolt generated (none
/// expected) are reported at its first line.
struct RulesDraft {
    var source: String
    var format: RulesVersion.Format

    /// The enforced JSON text and the compiled rules, or the first problem.
    func compile() -> Result<(json: String, rules: RuleSet), RulesProblem> {
        var json = source
        if format == .bolt {
            do { json = try BoltCompiler.compile(source: source) } catch {
                return .failure(RulesProblem(
                    line: error.location?.line ?? 1, column: error.location?.column ?? 1, message: error.message))
            }
        }
        do { return .success((json, try RuleSet(source: json))) } catch {
            return .failure(RulesProblem(
                line: format == .bolt ? 1 : error.line, column: format == .bolt ? 1 : error.column,
                message: format == .bolt ? "The generated rules do not compile: \(error.message)" : error.message))
        }
    }
}
