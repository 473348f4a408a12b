import Foundation
import HearthCore
import Testing
@testable import HearthRules

/// The steps of Bolt's live rule-simulation suites (shared/testdata/rules/cases-from-bolt.json),
/// run in order against the compiled sample rules: each asserted step must be allowed or denied as
/// Firebase did; allowed writes change the data later steps see.
@Suite(.enabled(if: SharedTestData.isAvailable, "shared test data not found at <package root>/../shared/testdata"))
struct BoltSimulationTests {
    @Test func everyAssertedStep() throws {
        let file = try SharedTestData.object("rules/cases-from-bolt.json")
        let users = file["users"] as! [String: Any]
        let scenarios = file["scenarios"] as! [[String: Any]]
        var asserted = 0, passed = 0
        var clock: Int64 = 1_700_000_000_000
        for scenario in scenarios {
            let name = "\(scenario["suite"]!) / \(scenario["test"]!)"
            let rules = try RuleSet(source: try SharedTestData.text(scenario["rulesFile"] as! String))
            var root = try node(scenario["initialData"])
            for (index, step) in (scenario["steps"] as! [[String: Any]]).enumerated() {
                clock += 1000
                let userName = step["as"] as! String
                let user = users[userName]
                let isAdmin = (user as? [String: Any])?["bypassRules"] as? Bool == true
                let auth: Node? = (user == nil || user is NSNull || isAdmin) ? nil : try node(user)
                let path = Path(step["path"] as! String)
                let label = "\(name) step \(index + 1) (\(step["label"] ?? ""))"
                let decision: RuleDecision
                switch step["op"] as! String {
                case "set":
                    let value = try node(step["value"])
                    decision =
                        isAdmin
                        ? RuleDecision(allowed: true, rule: nil, reason: "admin")
                        : rules.canWrite(at: path, newValue: value, root: root, auth: auth, now: clock)
                    if decision.allowed {
                        root.set(path, to: try ServerValues.resolve(value, at: path, in: root, now: clock))
                    }
                case "read":
                    decision = isAdmin ? RuleDecision(allowed: true, rule: nil, reason: "admin") : rules.canRead(at: path, root: root, auth: auth, now: clock)
                default:
                    Issue.record("\(label): unknown op")
                    continue
                }
                guard let expect = step["expect"] as? String else {
                    if !decision.allowed { Issue.record("\(label): unasserted setup step was denied: \(decision)") }
                    continue
                }
                asserted += 1
                if decision.allowed == (expect == "allow") {
                    passed += 1
                } else {
                    Issue.record("\(label): expected \(expect), got \(decision)")
                }
            }
        }
        print("bolt simulation suites: \(passed)/\(asserted) asserted steps pass")
        #expect(asserted == 148)
        #expect(passed == asserted)
    }

    /// Bolt's compiler does not type-check, and two of its samples compile to expressions that
    /// Firebase's deploy-time checker rejects (docs/rules.md §7): `functional.json` has a number-valued
    /// `.validate` (`(newData.val() + 2) * 3`) and `groups.json` names an unknown variable
    /// (`members != null`). Every other sample must load.
    static let invalidSamples: Set<String> = ["functional.json", "groups.json"]

    @Test func everyBoltSampleLoads() throws {
        let folder = SharedTestData.url("bolt/samples")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(names.count > 20)
        for name in names {
            let source = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            if Self.invalidSamples.contains(name) {
                #expect(throws: RulesError.self, "\(name)") { try RuleSet(source: source) }
            } else {
                #expect(throws: Never.self, "\(name)") { try RuleSet(source: source) }
            }
        }
    }
}
