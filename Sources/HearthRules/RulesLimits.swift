import HearthCore

/// Limits on rules documents and on evaluation, each with why it exists.
///
/// Exceeding a load-time limit (document size and depth, the regular expressions' repeats and states)
/// rejects the rule set with a `RulesError`. Running out of the evaluation budget denies the whole
/// operation with a decision that names the limit (docs/rules.md §10); a string result over its bound is
/// an ordinary runtime error instead: that rule counts as false and another level may still grant.
public enum RulesLimits {
    /// Largest rules source accepted, in UTF-8 bytes. Firebase's documented cap is commonly cited as
    /// 256 KB; a bigger document is almost certainly not hand-written rules.
    public static let maxSourceBytes = 256 * 1024
    /// JSON nesting of the rules document. Data paths are at most 32 keys deep, so deeper rules
    /// could never match anything; a little slack covers the `rules` wrapper and `.indexOn` arrays.
    public static let maxDocumentNesting = 40
    /// Height of one expression's syntax tree (parentheses, operators, calls, and each link of a
    /// chain like `a && b && c`). The parser, the checker and the compiled closures recurse once
    /// per level, so this bounds their stack use; generated rules (Bolt) stay far below it.
    public static let maxExpressionDepth = 256
    /// Characters in one expression.
    public static let maxExpressionLength = 16 * 1024
    /// `{n,m}` repetition bounds in `matches` patterns; repetitions are expanded into the matcher,
    /// so this bounds its size.
    public static let maxRegexRepeat = 1000
    /// States of one compiled `matches` pattern.
    public static let maxRegexStates = 20_000
    /// Budget of one operation (a read, a set or a whole update): every rule evaluated costs one
    /// unit plus one per snapshot navigation, method call or member access it performs. Big
    /// writes under a rules tree with validations spend one rule per written node.
    public static let evaluationBudget = 1_000_000
    /// Largest string an expression may build (`+`, `replace()`): the largest string a client may
    /// store (HearthCore's `Limits.stringLengthBytesMax`). A longer result is a runtime error (the rule
    /// is false), not gigabytes of memory: `replace()` with client-chosen text multiplies its length.
    public static let stringResultBytesMax = Limits.stringLengthBytesMax
    /// Bytes of string a search may scan per unit of budget: a 10 MiB string costs about ten thousand
    /// units to search (linear time, a few milliseconds).
    public static let scannedBytesPerBudgetUnit = 1024
    /// Matcher steps (characters × pattern instructions) per unit of budget for `matches()`: the whole
    /// budget buys about 64 million steps, a fraction of a second; a 10 MiB string against a pattern of
    /// thirty instructions is over it and denied before it runs (measured: minutes in a debug build).
    public static let regexStepsPerBudgetUnit = 64
}
