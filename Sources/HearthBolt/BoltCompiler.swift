/// Compiles Bolt, Firebase's typed language for Realtime Database security rules, to rules JSON.
///
/// The output is what Firebase's own `firebase-bolt` tool (0.8.4) produces for the same source, pretty-printed
/// the same way, so rules written for Firebase compile unchanged:
///
/// ```swift
/// let json = try BoltCompiler.compile(source: """
///     path /posts/{id} is Post { read() { true } }
///     type Post { message: String }
///     """)
/// // {
/// //   "rules": {
/// //     "posts": {
/// //       "$id": {
/// //         ".validate": "newData.hasChildren(['message'])",
/// // ...
/// ```
///
/// Errors carry the line and column of the problem (``BoltError``). The compiler never evaluates rules;
/// the rules engine loads the JSON like any hand-written rules file. See `docs/bolt.md`.
public enum BoltCompiler {
    /// The rules JSON for `source`, two-space indented and ending with a newline.
    public static func compile(source: String) throws(BoltError) -> String {
        try compileWithWarnings(source: source).json
    }

    /// The rules JSON for `source` and the warnings found while compiling it (deprecated syntax,
    /// unsupported method names), in source order for parse warnings, then generation warnings.
    public static func compileWithWarnings(source: String) throws(BoltError) -> BoltOutput {
        let (json, warnings) = try compileToTree(source: source)
        return BoltOutput(json: json.text, warnings: warnings)
    }

    /// The compiled rules as an ordered tree (tests compare it structurally).
    static func compileToTree(source: String) throws(BoltError) -> (RulesJSON, [BoltWarning]) {
        guard source.utf8.count <= BoltLimits.sourceBytesMax else {
            throw BoltError(.parse, "The Bolt source is larger than \(BoltLimits.sourceBytesMax) bytes.", at: nil)
        }
        let (program, parseWarnings) = try Parser.parse(source)
        let generator = try RulesGenerator(program)
        let rules = try generator.generate()
        return (rules, parseWarnings + generator.warnings)
    }
}

/// What ``BoltCompiler/compileWithWarnings(source:)`` returns.
public struct BoltOutput: Hashable, Sendable {
    /// The rules JSON text, `{"rules": {...}}`, two-space indented and ending with a newline.
    public let json: String
    public let warnings: [BoltWarning]
}
