import Foundation
import HearthCore
import Testing
@testable import HearthRules

/// The 186 single-expression cases targaryen recorded against live Firebase
/// (shared/testdata/rules/targaryen-live-fixtures.json): invalid rules must be rejected when the
/// rules are loaded; valid ones must allow or deny the read exactly as recorded, and a recorded
/// runtime error must make `(rule) || true` deny too (docs/rules.md §8).
@Suite(.enabled(if: SharedTestData.isAvailable, "shared test data not found at <package root>/../shared/testdata"))
struct TargaryenFixtureTests {
    struct Case: CustomStringConvertible {
        let index: Int
        let raw: [String: Any]
        var rule: String { raw["rule"] as! String }
        var description: String { "#\(index) \(rule)" }
    }

    static func cases() throws -> (users: [String: Any], tests: [Case]) {
        let file = try SharedTestData.object("rules/targaryen-live-fixtures.json")
        let tests = (file["tests"] as! [[String: Any]]).enumerated().map { Case(index: $0.offset, raw: $0.element) }
        return (file["users"] as! [String: Any], tests)
    }

    /// The rules document the fixture tool deployed: the rule as `.read` under the sorted
    /// wildcards, with an `.indexOn` when the query orders by a child or by value.
    static func rulesSource(rule: String, wildchildren: [String: String], query: [String: Any]?) throws -> String {
        var level: [String: Any] = [".read": rule]
        if let child = query?["orderByChild"] as? String { level[".indexOn"] = [child] }
        if query?["orderByValue"] != nil { level[".indexOn"] = [".value"] }
        for name in wildchildren.keys.sorted().reversed() { level = [name: level] }
        return try jsonText(["rules": level])
    }

    static func ruleQuery(_ query: [String: Any]?) throws -> RuleQuery {
        guard let query else { return .plainRead }
        var result = RuleQuery()
        if let child = query["orderByChild"] as? String { result.order = .child(child) }
        if query["orderByValue"] != nil { result.order = .value }
        if query["orderByPriority"] != nil { result.order = .priority }
        if let v = query["startAt"] { result.startAt = try node(v) }
        if let v = query["endAt"] { result.endAt = try node(v) }
        if let v = query["equalTo"] { result.equalTo = try node(v) }
        if let v = query["limitToFirst"] as? Int { result.limitToFirst = v }
        if let v = query["limitToLast"] as? Int { result.limitToLast = v }
        return result
    }

    @Test func everyRecordedCase() throws {
        let (users, tests) = try Self.cases()
        #expect(tests.count == 186)
        var passed = 0
        for test in tests {
            if try run(test, users: users) { passed += 1 }
        }
        print("targaryen live fixtures: \(passed)/\(tests.count) pass")
        #expect(passed == tests.count)
    }

    /// Runs one case; records an issue and returns false when it disagrees with Firebase.
    func run(_ test: Case, users: [String: Any]) throws -> Bool {
        let wildchildren = test.raw["wildchildren"] as? [String: String] ?? [:]
        let query = test.raw["query"] as? [String: Any]
        let source = try Self.rulesSource(rule: test.rule, wildchildren: wildchildren, query: query)
        let isValid = test.raw["isValid"] as! Bool
        let rules: RuleSet
        do {
            rules = try RuleSet(source: source)
        } catch {
            if !isValid { return true }
            Issue.record("\(test): Firebase accepted this rule, Hearth rejected it: \(error)")
            return false
        }
        guard isValid else {
            Issue.record("\(test): Firebase rejected this rule at deploy time, Hearth accepted it")
            return false
        }
        let userName = test.raw["user"] as! String
        let authValue = users[userName]
        let auth: Node? = (authValue == nil || authValue is NSNull) ? nil : try node(authValue)
        let root = try node(test.raw["data"])
        let path = Path(wildchildren.keys.sorted().map { ChildKey(wildchildren[$0]!) })
        let ruleQuery = try Self.ruleQuery(query)
        let decision = rules.canRead(at: path, root: root, auth: auth, now: 1_500_000_000_000, query: ruleQuery)

        if test.raw["failAtRuntime"] as? Bool == true {
            // A runtime error poisons `|| true` as well.
            let poisoned = try RuleSet(source: Self.rulesSource(rule: "(\(test.rule)) || true", wildchildren: wildchildren, query: query))
            let second = poisoned.canRead(at: path, root: root, auth: auth, now: 1_500_000_000_000, query: ruleQuery)
            if decision.allowed || second.allowed {
                Issue.record("\(test): Firebase failed at runtime; Hearth \(decision) / with || true: \(second)")
                return false
            }
            return true
        }
        let expected = test.raw["evaluateTo"] as! Bool
        if decision.allowed != expected {
            Issue.record("\(test): expected \(expected ? "allow" : "deny"), got \(decision)")
            return false
        }
        return true
    }
}
