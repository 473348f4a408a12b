import HearthCore
import HearthTesting
import Testing
@testable import HearthRules

/// Read and write walks beyond the spec's worked examples: decisions, captures, validation scope.
struct SemanticsTests {
    func rules(_ json: String) throws -> RuleSet { try RuleSet(source: #"{"rules": "# + json + "}") }

    @Test func decisionNamesTheRule() throws {
        let r = try rules(#"{"users": {"$uid": {".read": "auth.uid == $uid", ".write": "auth.uid == $uid"}}}"#)
        let ada = try Node(json: #"{"uid": "ada"}"#)
        let granted = r.canRead(at: "users/ada/x", root: .empty, auth: ada, now: 0)
        #expect(granted.allowed)
        #expect(granted.rule?.kind == .read)
        #expect(granted.rule?.pattern == "/users/$uid")
        #expect(granted.rule?.path == "users/ada")
        #expect(granted.rule?.expression == "auth.uid == $uid")
        let denied = r.canWrite(at: "users/bob", newValue: Node(1), root: .empty, auth: ada, now: 0)
        #expect(!denied.allowed)
        #expect(denied.rule?.kind == .write)
        #expect(denied.reason.contains("/users/$uid"))
        let nothing = r.canRead(at: "other", root: .empty, auth: ada, now: 0)
        #expect(!nothing.allowed && nothing.rule == nil)
    }

    @Test func runtimeErrorIsReported() throws {
        let r = try rules(#"{".read": "auth.uid.length > 0"}"#)
        let decision = r.canRead(at: .root, root: .empty, auth: nil, now: 0)
        #expect(!decision.allowed)
        #expect(decision.reason.contains("failed"))
    }

    @Test func dataIsAtTheRulesOwnLevel() throws {
        let r = try rules(#"{"a": {".read": "data.child('open').val() == true"}}"#)
        let root = try Node(json: #"{"a": {"open": true}}"#)
        #expect(r.canRead(at: "a/b/c", root: root, auth: nil, now: 0).allowed)
    }

    @Test func nestedCapturesBindInOrder() throws {
        let r = try rules(#"{"$a": {"$b": {".read": "$a + '/' + $b == 'x/y'"}}}"#)
        #expect(r.canRead(at: "x/y", root: .empty, auth: nil, now: 0).allowed)
        #expect(!r.canRead(at: "y/x", root: .empty, auth: nil, now: 0).allowed)
    }

    @Test func validateDoesNotCascade() throws {
        let r = try rules(#"{".write": true, ".validate": true, "a": {".validate": "newData.isString()"}}"#)
        #expect(!r.canWrite(at: .root, newValue: try Node(json: #"{"a": 1}"#), root: .empty, auth: nil, now: 0).allowed)
        #expect(r.canWrite(at: .root, newValue: try Node(json: #"{"a": "s"}"#), root: .empty, auth: nil, now: 0).allowed)
    }

    @Test func validateAloneNeverGrants() throws {
        let r = try rules(#"{".validate": true}"#)
        #expect(!r.canWrite(at: "x", newValue: Node(1), root: .empty, auth: nil, now: 0).allowed)
    }

    @Test func untouchedSiblingsAreNotValidated() throws {
        let r = try rules(#"{".write": true, "$k": {".validate": "newData.isNumber()"}}"#)
        let root = try Node(json: #"{"bad": "s"}"#)
        #expect(r.canWrite(at: "good", newValue: Node(1), root: root, auth: nil, now: 0).allowed)
        // Rewriting the root covers every child, including the existing bad one.
        #expect(!r.canWrite(at: .root, newValue: try Node(json: #"{"bad": "s", "good": 1}"#), root: root, auth: nil, now: 0).allowed)
    }

    @Test func updateValidatesEachLocationAgainstTheMergedTree() throws {
        let r = try rules(#"{".write": true, "p": {".validate": "newData.child('a').val() + newData.child('b').val() == 3"}}"#)
        let root = try Node(json: #"{"p": {"a": 0, "b": 0}}"#)
        let both = r.canUpdate(at: "p", children: [("a", Node(1)), ("b", Node(2))], root: root, auth: nil, now: 0)
        #expect(both.allowed)
        let one = r.canUpdate(at: "p", children: [("a", Node(1))], root: root, auth: nil, now: 0)
        #expect(!one.allowed)
        let overlapping = r.canUpdate(at: "p", children: [("a", Node(1)), ("a/b", Node(2))], root: root, auth: nil, now: 0)
        #expect(!overlapping.allowed)
    }

    @Test func incrementResolvesBeforeRules() throws {
        let r = try rules(#"{".write": true, "n": {".validate": "newData.val() == data.val() + 1"}}"#)
        let root = try Node(json: #"{"n": 41}"#)
        let increment = try Node(json: #"{".sv": {"increment": 1}}"#)
        #expect(r.canWrite(at: "n", newValue: increment, root: root, auth: nil, now: 0).allowed)
    }

    @Test func budgetExhaustionDenies() async throws {
        let r = try rules(#"{".write": true, "$k": {".validate": "newData.isNumber()"}}"#)
        // Seconds of evaluation: on a thread of its own (see offThePool).
        let decision = await offThePool {
            var children = ChildrenMap()
            for i in 0..<(RulesLimits.evaluationBudget / 2) { children[ChildKey("k\(i)")] = Node(i) }
            return r.canWrite(at: .root, newValue: Node(children: children), root: .empty, auth: nil, now: 0)
        }
        #expect(!decision.allowed)
        #expect(decision.reason.contains("budget"))
    }

    @Test func priorityPathsAreCheckedAtTheirNode() throws {
        let r = try rules(#"{"$k": {".read": "$k == 'a'", ".write": "$k == 'a'", ".validate": "newData.getPriority() == 5"}}"#)
        let root = try Node(json: #"{"a": 1, "b": 1}"#)
        #expect(r.canRead(at: "a/.priority", root: root, auth: nil, now: 0).allowed)
        #expect(!r.canRead(at: "b/.priority", root: root, auth: nil, now: 0).allowed)
        #expect(r.canWrite(at: "a/.priority", newValue: Node(5), root: root, auth: nil, now: 0).allowed)
        #expect(!r.canWrite(at: "a/.priority", newValue: Node(6), root: root, auth: nil, now: 0).allowed)
        #expect(!r.canWrite(at: "b/.priority", newValue: Node(5), root: root, auth: nil, now: 0).allowed)
    }

    @Test func indexesAreCollected() throws {
        let r = try rules(#"{"users": {".indexOn": "age", "$uid": {"posts": {".indexOn": ["time", ".value"]}}}}"#)
        #expect(r.indexes.count == 2)
        #expect(r.indexes[0] == RuleIndex(pattern: "users", children: ["age"]))
        #expect(r.indexes[1].pattern == Path(["users", "$uid", "posts"]))
        #expect(r.indexes[1].matches("users/ada/posts"))
        #expect(!r.indexes[1].matches("users/ada"))
        #expect(r.indexes[1].queryIndexes == [.child("time"), .value])
    }
}
