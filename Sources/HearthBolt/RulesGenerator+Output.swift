/// Converting the validator tree to rules JSON text (bolt.md §6.3 and §6.7).
extension RulesGenerator {
    private static let thisForRule = [".validate": "newData", ".write": "newData", ".read": "data"]

    /// The JSON for `validator` at `labels`, or `nil` when nothing is left after pruning.
    ///
    /// A `.read` or `.write` of `false` and a `.validate` of `true` say nothing and are dropped, unless a
    /// sibling key is a `$wildcard`: then the literal key must keep its own rules so the wildcard's rules
    /// do not apply to it (Firebase's issue 97).
    func convert(
        _ validator: Validator, labels: [String], siblingKeys: [String], scope inherited: [String: Expression]
    ) throws(BoltError) -> RulesJSON? {
        let scope = validator.scope ?? inherited
        let ownLabel = labels.last
        let hasWildcardSibling = siblingKeys.contains { $0 != ownLabel && $0.hasPrefix("$") }
        var members: [(key: String, value: RulesJSON)] = []
        for key in validator.keys {
            switch validator[key]! {
            case .terms(let terms):
                guard let thisIs = Self.thisForRule[key] else { continue }
                let text = try ruleText(terms, thisIs: thisIs, scope: scope, labels: labels)
                let isNoOp = key == ".validate" ? text == "true" : text == "false"
                if isNoOp && !hasWildcardSibling { continue }
                members.append((key, .string(text)))
            case .child(let child):
                if let json = try convert(child, labels: labels + [key], siblingKeys: validator.keys, scope: scope) {
                    members.append((key, json))
                }
            case .names(let names):
                members.append((key, .strings(names)))
            }
        }
        return members.isEmpty ? nil : .object(members)
    }
}
