public import HearthCore

/// The answer to "may this read or write happen?", with the rule that decided it, for error
/// messages, debug output (Firebase's `X-Firebase-Auth-Debug`) and `hearth rules test`.
///
///     let decision = rules.canRead(at: "users/ada", root: tree, auth: nil, now: 0)
///     if !decision.allowed { print(decision) }   // denied: no .read rule granted access ...
public struct RuleDecision: Sendable, Hashable, CustomStringConvertible {
    /// A rule that took part in the decision.
    public struct Rule: Sendable, Hashable {
        public let kind: RuleKind
        /// The rules-tree location with wildcards as written: `/rooms/$room`.
        public let pattern: String
        /// The data location the rule was evaluated at: `/rooms/r1`.
        public let path: Path
        /// The expression text, or `true` / `false`.
        public let expression: String
    }

    public let allowed: Bool
    /// The rule that granted (`.read`/`.write` true) or denied (a failing `.validate`, or the
    /// last `.read`/`.write` that did not grant); nil when no rule applied at all.
    public let rule: Rule?
    /// A sentence for logs and debug output: which rule, and why it failed (false, or the runtime
    /// error that made it false).
    public let reason: String

    public init(allowed: Bool, rule: Rule?, reason: String) {
        self.allowed = allowed
        self.rule = rule
        self.reason = reason
    }

    public var description: String { (allowed ? "allowed: " : "denied: ") + reason }
}
