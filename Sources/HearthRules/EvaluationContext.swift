import HearthCore

/// Everything one rule evaluation reads, set up by the read and write walks.
///
/// One context serves a whole operation: the walks move `location`, `data`, `newData` and the
/// captures as they descend, and `budget` counts down across every rule evaluated.
struct EvaluationContext {
    var auth: RuleValue
    var now: Double
    /// The tree before the operation (`root`, `data`).
    var root: Node
    /// The tree after the operation (`newData`); the same as `root` for reads.
    var newRoot: TreeView
    var query: RuleQuery
    /// The location of the rule being evaluated and the nodes there.
    var location: ArraySlice<ChildKey> = []
    var data: Node
    var newData: TreeView
    /// Captured `$wildcard` keys, in the order the rule walk bound them (outermost first).
    var captures: [String] = []
    /// Units of work left for this operation (see `RulesLimits.evaluationBudget`).
    var budget: Int

    init(auth: Node?, now: Int64, root: Node, newRoot: TreeView, query: RuleQuery, budget: Int = RulesLimits.evaluationBudget) {
        self.auth = auth.map(RuleValue.init(node:)) ?? .null
        self.now = Double(now)
        self.root = root
        self.newRoot = newRoot
        self.query = query
        self.data = root
        self.newData = newRoot
        self.budget = budget
    }

    /// Spends one unit of budget; throws when the operation has used it all.
    @inline(__always)
    mutating func spend() throws(RuleFailure) {
        budget -= 1
        if budget < 0 { throw RuleFailure.budgetExhausted }
    }

    /// Spends what scanning `bytes` bytes costs (``RulesLimits/scannedBytesPerBudgetUnit``).
    mutating func spend(scanning bytes: Int) throws(RuleFailure) {
        budget -= bytes / RulesLimits.scannedBytesPerBudgetUnit
        if budget < 0 { throw RuleFailure.budgetExhausted }
    }

    /// Spends what matching `characters` characters against a pattern of `instructions` costs
    /// (``RulesLimits/regexStepsPerBudgetUnit``), before the matcher runs.
    mutating func spend(matching characters: Int, instructions: Int) throws(RuleFailure) {
        let (steps, overflow) = characters.multipliedReportingOverflow(by: max(instructions, 1))
        budget -= overflow ? budget + 1 : steps / RulesLimits.regexStepsPerBudgetUnit
        if budget < 0 { throw RuleFailure.budgetExhausted }
    }
}

/// Why an evaluation did not produce a value: a runtime error (the rule counts as false,
/// docs/rules.md §8) or the operation's budget running out (the operation is denied).
enum RuleFailure: Error, Sendable {
    case runtime(String)
    case budgetExhausted

    var message: String {
        switch self {
        case .runtime(let message): return message
        case .budgetExhausted: return "evaluation budget of \(RulesLimits.evaluationBudget) steps exhausted"
        }
    }
}

/// A compiled expression.
typealias Evaluator = @Sendable (inout EvaluationContext) throws(RuleFailure) -> RuleValue
