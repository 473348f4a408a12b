public import HearthCore

/// The answer to "may this read or write happen?", with the rule that decided it, for error
/// messages, debug output (Firebase's `X-Firebase-Auth-Debug`) and `hearth rules test`.
///
///     let decision = rules.canRead(at: "users/ada", root: tree, auth: nil, now: 0)
///     if !decision.allowed { print(decision) }   // denied: no .read rule granted access ...
///
/// The explanation is kept as parts and only spelled out when `reason` is read, so checks that
/// nobody explains cost no string building.
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

    /// How the deciding rule came out.
    enum Detail: Sendable, Hashable {
        case granted
        /// No `.read`/`.write` on the walk granted; `rule` is the last one evaluated.
        case notGranted(target: Path, failure: String?)
        /// No rule of the kind exists on the walk.
        case noRule(kind: RuleKind, target: Path)
        /// A `.validate` was false (or failed).
        case validationFailed(failure: String?)
        case budgetExhausted
        case text(String)
    }

    public let allowed: Bool
    /// The rule that granted (`.read`/`.write` true) or denied (a failing `.validate`, or the
    /// last `.read`/`.write` that did not grant); nil when no rule applied at all.
    public let rule: Rule?
    let detail: Detail

    public init(allowed: Bool, rule: Rule?, reason: String) {
        self.init(allowed: allowed, rule: rule, detail: .text(reason))
    }

    init(allowed: Bool, rule: Rule?, detail: Detail) {
        self.allowed = allowed
        self.rule = rule
        self.detail = detail
    }

    /// A sentence for logs and debug output: which rule, and why it failed (false, or the runtime
    /// error that made it false).
    public var reason: String {
        func outcome(_ failure: String?) -> String {
            failure.map { "failed (\($0)), which counts as false" } ?? "evaluated to false"
        }
        let where_ = rule.map { "\($0.kind.rawValue) at \($0.pattern)" } ?? "a rule"
        let expression = rule?.expression ?? ""
        switch detail {
        case .granted:
            return "\(where_) granted: \(expression)"
        case .notGranted(let target, let failure):
            let kind = rule?.kind.rawValue ?? "rule"
            return "no \(kind) rule granted access to \(target.slashed); the last one, \(where_), \(outcome(failure)): \(expression)"
        case .noRule(let kind, let target):
            return "no \(kind.rawValue) rule applies to \(target.slashed)"
        case .validationFailed(let failure):
            let data = rule.map { " (data \($0.path.slashed))" } ?? ""
            return "\(where_)\(data) \(outcome(failure)): \(expression)"
        case .budgetExhausted:
            return "the \(RuleFailure.budgetExhausted.message) (at \(where_))"
        case .text(let text):
            return text
        }
    }

    public var description: String { (allowed ? "allowed: " : "denied: ") + reason }
}
