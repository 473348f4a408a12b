public import HearthCore

/// A file of rules test cases (`hearth rules test RULES CASES.json`): a starting tree and reads and
/// writes, each by some user, each expected to be allowed or denied. Cases are independent: each is
/// decided against `data`, not against what earlier cases wrote. An update lists its locations as
/// `{"path", "value"}` objects (a location without a value is removed: JSON null drops out of a tree).
///
///     {
///       "data": {"users": {"ada": {"name": "Ada"}}},
///       "now": 1700000000000,
///       "cases": [
///         {"name": "owners write", "auth": {"uid": "ada"}, "op": "write", "path": "/users/ada/name",
///          "value": "Ada L.", "expect": "allow"},
///         {"name": "strangers may not", "auth": null, "op": "read", "path": "/users", "expect": "deny"},
///         {"name": "fan-out", "auth": {"uid": "ada"}, "op": "update", "path": "/",
///          "values": [{"path": "users/ada/name", "value": "A"}, {"path": "names/old"}], "expect": "deny"}
///       ]
///     }
public struct RulesTestCases: Sendable {
    public struct Case: Sendable {
        public enum Operation: String, Sendable { case read, write, update }
        public var name: String
        public var auth: Node?
        public var operation: Operation
        public var path: Path
        public var value: Node
        /// An update's locations, relative to `path`.
        public var values: [(Path, Node)]
        public var expectAllowed: Bool
    }

    /// What one case came to.
    public struct Outcome: Sendable {
        public var testCase: Case
        public var decision: RuleDecision
        public var passed: Bool { decision.allowed == testCase.expectAllowed }
    }

    public var data: Node
    public var now: Int64
    public var cases: [Case]

    /// Reads a cases document; throws a message naming the case and field that is wrong.
    public init(json: String) throws(RulesTestCasesError) {
        let document: Node
        do { document = try Node(json: json) } catch { throw RulesTestCasesError("not JSON: \(error)") }
        data = document.child(ChildKey("data"))
        if case .integer(let now)? = document.child(ChildKey("now")).leafValue { self.now = now } else { now = 0 }
        var cases: [Case] = []
        var failure: RulesTestCasesError?
        document.child(ChildKey("cases")).children.forEach { key, entry in
            do throws(RulesTestCasesError) { cases.append(try Self.testCase(entry, number: key.string)) } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        guard !cases.isEmpty else { throw RulesTestCasesError("no cases: add a \"cases\" array") }
        self.cases = cases
    }

    private static func testCase(_ entry: Node, number: String) throws(RulesTestCasesError) -> Case {
        let name = entry.child(ChildKey("name")).stringValue ?? "case \(number)"
        guard let op = entry.child(ChildKey("op")).stringValue, let operation = Case.Operation(rawValue: op) else {
            throw RulesTestCasesError("\(name): \"op\" must be \"read\", \"write\" or \"update\"")
        }
        guard let pathText = entry.child(ChildKey("path")).stringValue else {
            throw RulesTestCasesError("\(name): \"path\" must be a string such as \"/users/ada\"")
        }
        let expect = entry.child(ChildKey("expect")).stringValue
        guard expect == "allow" || expect == "deny" else {
            throw RulesTestCasesError("\(name): \"expect\" must be \"allow\" or \"deny\"")
        }
        let auth = entry.child(ChildKey("auth"))
        var values: [(Path, Node)] = []
        var malformed = false
        entry.child(ChildKey("values")).children.forEach { _, location in
            guard let relative = location.child(ChildKey("path")).stringValue else {
                malformed = true
                return false
            }
            values.append((Path(relative), location.child(ChildKey("value"))))
            return true
        }
        if malformed || (operation == .update && values.isEmpty) {
            throw RulesTestCasesError("\(name): an update needs \"values\": [{\"path\": …, \"value\": …}, …]")
        }
        return Case(
            name: name, auth: auth.isEmpty ? nil : auth, operation: operation, path: Path(pathText),
            value: entry.child(ChildKey("value")), values: values, expectAllowed: expect == "allow")
    }

    /// Decides every case with `rules`.
    public func run(_ rules: RuleSet) -> [Outcome] {
        cases.map { testCase in
            let decision: RuleDecision
            switch testCase.operation {
            case .read:
                decision = rules.canRead(at: testCase.path, root: data, auth: testCase.auth, now: now)
            case .write:
                decision = rules.canWrite(at: testCase.path, newValue: testCase.value, root: data, auth: testCase.auth, now: now)
            case .update:
                decision = rules.canUpdate(
                    at: testCase.path, children: testCase.values, root: data, auth: testCase.auth, now: now)
            }
            return Outcome(testCase: testCase, decision: decision)
        }
    }
}

/// A cases file that cannot be used, and why.
public struct RulesTestCasesError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
