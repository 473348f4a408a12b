import HearthCore
import HearthRules
import HearthSupport

/// Workloads for the security-rules engine (HearthRules).
enum RulesWorkload {
    /// A per-user read rule, the most common shape in Firebase apps.
    static let readRules = """
        { "rules": { "users": { "$uid": { ".read": "auth != null && auth.uid == $uid" } } } }
        """

    /// Five levels with a validation at each and a per-owner write rule: /a/$b/c/$d/e.
    static let writeRules = """
        { "rules": { "a": {
            ".validate": "newData.hasChildren()",
            "$b": {
              ".validate": "$b.length < 20",
              "c": {
                ".validate": "newData.hasChildren()",
                "$d": {
                  ".write": "auth != null && auth.uid == $d",
                  ".validate": "newData.hasChildren(['e'])",
                  "e": {
                    ".validate": "newData.hasChildren(['x', 'y'])",
                    "x": { ".validate": "newData.isNumber() && newData.val() >= 0" },
                    "y": { ".validate": "newData.isString() && newData.val().length < 100" },
                    "$other": { ".validate": false }
        } } } } } } }
        """

    /// Runs every read check; returns how many were allowed. Not inlined, so profilers can single
    /// out the measured loop.
    @inline(never)
    static func readEach(_ rules: RuleSet, paths: [Path], auths: [Node], root: Node) -> Int {
        var allowed = 0
        for i in paths.indices where rules.canRead(at: paths[i], root: root, auth: auths[i], now: 0).allowed {
            allowed += 1
        }
        return allowed
    }

    /// The same decision written by hand in Swift: the path is `users/<uid>` and the `uid` claim
    /// equals the key.
    @inline(never)
    static func readEachByHand(paths: [Path], auths: [Node]) -> Int {
        let users = ChildKey("users"), uid = ChildKey("uid")
        var allowed = 0
        for i in paths.indices {
            let path = paths[i]
            guard path.count >= 2, path.keys[0] == users else { continue }
            let claim = auths[i].child(uid)
            if !claim.isEmpty, claim.stringValue == path.keys[1].string { allowed += 1 }
        }
        return allowed
    }
}

extension Scenario {
    /// Read checks per second through a `users/$uid` rule: the rules walk, capture binding and
    /// `auth != null && auth.uid == $uid`, against the same test written by hand in Swift.
    static let rulesEval = Scenario(
        name: "rules.eval",
        summary: "Read checks/s through `auth != null && auth.uid == $uid` (walk + evaluation), one core"
    ) { context in
        let rules = try RuleSet(source: RulesWorkload.readRules)
        let checks = 2_000_000, users = 1000
        var random = SplitMix64(seed: 21)
        var paths: [Path] = [], auths: [Node] = []
        let authNodes = (0..<users).map { Node(["uid": Node("user\($0)"), "provider": Node("password")]) }
        for _ in 0..<checks {
            let owner = random.next(below: users)
            // Three in four reads are by the owner (allowed), the rest by someone else (denied).
            let reader = random.next(below: 4) == 0 ? random.next(below: users) : owner
            paths.append(Path(["users", ChildKey("user\(owner)"), "profile"]))
            auths.append(authNodes[reader])
        }
        var allowed = 0, allowedByHand = 0
        let hearth = context.measure("HearthRules canRead") {
            allowed = RulesWorkload.readEach(rules, paths: paths, auths: auths, root: .empty)
        }
        let reference = context.measure("hand-written Swift check") {
            allowedByHand = RulesWorkload.readEachByHand(paths: paths, auths: auths)
        }
        precondition(allowed == allowedByHand, "the rule and the hand-written check must agree")
        print("   \(allowed) of \(checks) reads allowed")
        return BenchmarkResult(
            scenario: "rules.eval", metric: "read checks per second", value: Double(checks) / hearth.median.seconds,
            unit: "checks/s", reference: "hand-written Swift closure, same decision",
            referenceValue: Double(checks) / reference.median.seconds)
    }

    /// Latency a 5-level rules tree with validations adds to a write: `canWrite` (merge into the
    /// tree, `.write` walk, path and subtree validation) against the write itself.
    static let rulesWrite = Scenario(
        name: "rules.write",
        summary: "canWrite through a 5-level rules tree with 7 validations, against the write itself"
    ) { context in
        let rules = try RuleSet(source: RulesWorkload.writeRules)
        let width = 100, writes = 100_000
        var entries: [(key: ChildKey, value: Node)] = []
        for b in 0..<width {
            var ds: [(key: ChildKey, value: Node)] = []
            for d in 0..<width {
                ds.append((ChildKey("d\(d)"), Node(["e": Node(["x": Node(d), "y": Node("init")])])))
            }
            ds.sort { $0.key < $1.key }
            entries.append((ChildKey("b\(b)"), Node(["c": Node(children: ChildrenMap(sortedUniqueElements: ds))])))
        }
        entries.sort { $0.key < $1.key }
        var tree = DatabaseTree()
        try tree.set("a", to: Node(children: ChildrenMap(sortedUniqueElements: entries)))
        let root = tree.root

        var random = SplitMix64(seed: 22)
        let plan = (0..<writes).map { i -> (path: Path, value: Node, auth: Node) in
            let b = random.next(below: width), d = random.next(below: width)
            let path = Path(["a", ChildKey("b\(b)"), "c", ChildKey("d\(d)"), "e"])
            return (path, Node(["x": Node(i), "y": Node("value \(i)")]), Node(["uid": Node("d\(d)")]))
        }
        let clock = ContinuousClock()
        var latencies: [Duration] = [], referenceLatencies: [Duration] = [], evaluationLatencies: [Duration] = []
        var allowed = 0
        _ = context.measure("HearthRules canWrite") {
            latencies.removeAll(keepingCapacity: true)
            allowed = 0
            for step in plan {
                let start = clock.now
                let decision = rules.canWrite(at: step.path, newValue: step.value, root: root, auth: step.auth, now: 0)
                latencies.append(clock.now - start)
                if decision.allowed { allowed += 1 }
            }
        }
        precondition(allowed == writes, "every planned write is by the owner and valid")
        // The same checks on a merged tree built outside the timer: the rules' own share, for a
        // server that merges the write once and hands both trees to `canWrite(locations:…)`.
        _ = context.measure("HearthRules, merged tree given") {
            evaluationLatencies.removeAll(keepingCapacity: true)
            for step in plan {
                let newRoot = root.setting(step.path, to: step.value)
                let start = clock.now
                let decision = rules.canWrite(locations: [step.path], oldRoot: root, newRoot: newRoot, auth: step.auth, now: 0)
                evaluationLatencies.append(clock.now - start)
                blackHole(decision)
            }
        }
        _ = try context.measure("HearthCore DatabaseTree.set") {
            referenceLatencies.removeAll(keepingCapacity: true)
            for step in plan {
                let start = clock.now
                blackHole(try tree.set(step.path, to: step.value))
                referenceLatencies.append(clock.now - start)
            }
        }
        let p50 = percentile(latencies, 0.50), p99 = percentile(latencies, 0.99)
        let referenceP50 = percentile(referenceLatencies, 0.50), evaluationP50 = percentile(evaluationLatencies, 0.50)
        print("   canWrite p50 \(rounded(p50, places: 2)) µs, p99 \(rounded(p99, places: 2)) µs; rules alone (merged tree given) p50 \(rounded(evaluationP50, places: 2)) µs; the write itself p50 \(rounded(referenceP50, places: 2)) µs (last runs)")
        return BenchmarkResult(
            scenario: "rules.write", metric: "p50 latency added by rules to a write", value: p50, unit: "µs",
            reference: "the write itself (DatabaseTree.set)", referenceValue: referenceP50,
            extras: [("p99", p99), ("p50RulesAloneMergedTreeGiven", evaluationP50)])
    }
}
