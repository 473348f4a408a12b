public import HearthCore

/// A compiled Firebase Realtime Database rules document and the read and write checks it answers
/// (docs/rules.md). Compiling parses and type-checks every expression once; checks then only run
/// closures. A `RuleSet` is immutable and `Sendable`: share one across threads and swap it
/// atomically when the rules change.
///
///     let rules = try RuleSet(source: """
///         { "rules": { "users": { "$uid": { ".read": "auth != null && auth.uid == $uid" } } } }
///         """)
///     rules.canRead(at: "users/ada", root: tree, auth: try Node(json: #"{"uid":"ada"}"#), now: now).allowed  // true
///
/// Admin access (service accounts, database secrets) is not modelled here: callers skip the
/// checks for privileged clients, as Firebase does.
public struct RuleSet: Sendable {
    /// The rules text as given (comments included), for `GET /.settings/rules.json`.
    public let source: String
    /// Every `.indexOn` declaration, in document order.
    public let indexes: [RuleIndex]
    let tree: RuleNode
    /// True when the root's `.write` is `true` and no `.validate` exists: every write is allowed, so
    /// a server need not check writes at all (nor keep the tree from before a write for the check).
    public let allowsEveryWrite: Bool

    /// Compiles a rules document: JSON with `//` and `/* */` comments, a single top-level `rules`
    /// key (docs/rules.md §1). Throws on the first problem, with its line and column.
    public init(source: String) throws(RulesError) {
        if source.utf8.count > RulesLimits.maxSourceBytes {
            throw RulesError(line: 1, column: 1, message: "The rules are larger than \(RulesLimits.maxSourceBytes) bytes.")
        }
        let document = try RulesJSONParser.parse(source)
        var loader = RuleTreeLoader()
        tree = try loader.load(document)
        indexes = loader.indexes
        self.source = source
        allowsEveryWrite = tree.write?.isConstantlyTrue == true && !tree.hasValidation
    }

    /// Denies every read and write (Firebase's locked mode); privileged clients still pass.
    public static let locked = try! RuleSet(source: #"{"rules": {".read": false, ".write": false}}"#)

    /// Allows every read and write.
    public static let open = try! RuleSet(source: #"{"rules": {".read": true, ".write": true}}"#)

    // MARK: Reads

    /// May `auth` read (get, listen to, or query) `path`? (docs/rules.md §3)
    ///
    /// `.read` rules from the root down to `path` are evaluated, each with `data` at its own
    /// level; the first true grants `path` and everything below it. Rules below `path` are never
    /// consulted: a read is allowed or denied as a whole.
    ///
    /// - Parameters:
    ///   - root: the whole database before the read.
    ///   - auth: the `auth` variable (`{"uid": …, "provider": …, "token": {…claims}}`), nil when
    ///     unauthenticated.
    ///   - now: server time in milliseconds since the epoch.
    ///   - query: what `query.*` reports; `.plainRead` for a read without a query.
    public func canRead(at path: Path, root: Node, auth: Node?, now: Int64, query: RuleQuery = .plainRead) -> RuleDecision {
        // Reading `a/b/.priority` reads part of the node at `a/b`.
        let path = path.last == .priorityKey ? path.parent! : path
        var context = EvaluationContext(auth: auth, now: now, root: root, newRoot: .node(root), query: query)
        var node = tree
        var data = root
        var depth = 0
        var last: (rule: CompiledRule, node: RuleNode, depth: Int, failure: RuleFailure?)?
        while true {
            if let rule = node.read {
                context.location = path.keys[0..<depth]
                context.data = data
                context.newData = .node(data)
                switch evaluate(rule, &context) {
                case .granted:
                    return RuleDecision(allowed: true, rule: describe(rule, node, path, depth), detail: .granted)
                case .notGranted(let failure):
                    last = (rule, node, depth, failure)
                case .exhausted:
                    return exhausted(rule, node, path, depth)
                }
            }
            guard depth < path.count, let next = step(from: node, key: path.keys[depth], captures: &context.captures) else { break }
            data = data.child(path.keys[depth])
            node = next
            depth += 1
        }
        guard let last else {
            return RuleDecision(allowed: false, rule: nil, detail: .noRule(kind: .read, target: path))
        }
        return RuleDecision(
            allowed: false, rule: describe(last.rule, last.node, path, last.depth),
            detail: .notGranted(target: path, failure: last.failure?.message))
    }

    /// `canRead` for wire query parameters: nil is a plain read.
    public func canRead(at path: Path, root: Node, auth: Node?, now: Int64, query: QueryParams?) -> RuleDecision {
        canRead(at: path, root: root, auth: auth, now: now, query: query.map { RuleQuery($0) } ?? .plainRead)
    }

    // MARK: Writes

    /// May `auth` replace the value at `path` with `newValue`? (a set, push, remove, transaction
    /// commit; docs/rules.md §4)
    ///
    /// `newValue` is the value as the client sent it, parsed (`Node(json:)`): server values are
    /// resolved here against `root` with `now`, the same way `DatabaseTree.set` resolves them, so
    /// rules see the stored result (`newData.val() == now` holds for a timestamp).
    public func canWrite(at path: Path, newValue: Node, root: Node, auth: Node?, now: Int64) -> RuleDecision {
        var resolved = newValue
        do {
            if ServerValues.containsPlaceholders(newValue) {
                resolved = try ServerValues.resolve(newValue, at: path, in: root, now: now)
            }
        } catch {
            return RuleDecision(allowed: false, rule: nil, detail: .text("invalid write: \(error.message)"))
        }
        return check(locations: [path], oldRoot: root, newRoot: Self.merge([(path, resolved)], into: root), auth: auth, now: now)
    }

    /// May `auth` apply a multi-path update at `path`? Each entry of `children` (relative path,
    /// value) is a write location checked on its own; the update is allowed only when every one
    /// is, and all of them are validated against the one merged result (docs/rules.md §4.2).
    /// Overlapping entries are denied (the server rejects them before rules anyway).
    public func canUpdate(at path: Path, children: [(Path, Node)], root: Node, auth: Node?, now: Int64) -> RuleDecision {
        var writes: [(Path, Node)] = []
        var locations: [Path] = []
        if let (a, b) = Path.firstOverlap(in: children.map { path.appending(path: $0.0) }) {
            return RuleDecision(allowed: false, rule: nil, detail: .text("invalid update: \(b.slashed) overlaps \(a.slashed)"))
        }
        for (relative, value) in children {
            let location = path.appending(path: relative)
            do {
                writes.append((location, try ServerValues.resolve(value, at: location, in: root, now: now)))
            } catch {
                return RuleDecision(allowed: false, rule: nil, detail: .text("invalid write: \(error.message)"))
            }
            locations.append(location)
        }
        return check(locations: locations, oldRoot: root, newRoot: Self.merge(writes, into: root), auth: auth, now: now)
    }

    /// The post-write tree as rules see it: an overlay on `root` (see `TreeView`), or the merged
    /// node itself for priority-only writes (`…/.priority`), which `Node.set` treats specially.
    static func merge(_ writes: [(Path, Node)], into root: Node) -> TreeView {
        if writes.count == 1, writes[0].0.last != .priorityKey {
            return TreeView.replacing(writes[0].0.keys[...], with: writes[0].1, in: root)
        }
        if writes.contains(where: { $0.0.last == .priorityKey }) {
            var merged = root
            for (path, value) in writes { merged.set(path, to: value) }
            return .node(merged)
        }
        return TreeView.applying(writes.map { (keys: $0.0.keys[...], value: $0.1) }, to: root)
    }

    /// The write check on an already computed result: `newRoot` is the whole tree after the
    /// operation (server values resolved), `locations` the paths the operation replaced.
    public func canWrite(locations: [Path], oldRoot: Node, newRoot: Node, auth: Node?, now: Int64) -> RuleDecision {
        check(locations: locations, oldRoot: oldRoot, newRoot: .node(newRoot), auth: auth, now: now)
    }

    private func check(locations: [Path], oldRoot: Node, newRoot: TreeView, auth: Node?, now: Int64) -> RuleDecision {
        var context = EvaluationContext(auth: auth, now: now, root: oldRoot, newRoot: newRoot, query: .plainRead)
        var first: RuleDecision?
        for location in locations {
            context.captures.removeAll(keepingCapacity: true)
            // A priority write (`a/b/.priority`) changes the node at `a/b`: its rules decide.
            let target = location.last == .priorityKey ? location.parent! : location
            let decision = checkWrite(at: target, &context)
            if !decision.allowed { return decision }
            if first == nil { first = decision }
        }
        return first ?? RuleDecision(allowed: true, rule: nil, detail: .text("nothing to write"))
    }

    /// A rule node on the walk to a write location, with the data at its level.
    private struct WriteLevel {
        let node: RuleNode
        let depth: Int
        let data: Node
        let newData: TreeView
    }

    /// One write location: `.write` top-down until one grants, `.validate` on the path where new
    /// data exists, then `.validate` over the written subtree.
    private func checkWrite(at path: Path, _ context: inout EvaluationContext) -> RuleDecision {
        var levels: [WriteLevel] = []
        levels.reserveCapacity(path.count + 1)
        var node = tree
        var data = context.root, newData = context.newRoot
        var depth = 0
        while true {
            levels.append(WriteLevel(node: node, depth: depth, data: data, newData: newData))
            guard depth < path.count else { break }
            let key = path.keys[depth]
            guard let next = step(from: node, key: key, captures: &context.captures) else { break }
            data = data.child(key)
            newData = newData.child(key)
            node = next
            depth += 1
        }
        // Captures only grow down the walk and a rule reads only the slots in its scope, so every
        // level can see the whole list.

        var grant: RuleDecision?
        var last: (rule: CompiledRule, level: WriteLevel, failure: RuleFailure?)?
        for level in levels {
            guard let rule = level.node.write else { continue }
            context.location = path.keys[0..<level.depth]
            context.data = level.data
            context.newData = level.newData
            switch evaluate(rule, &context) {
            case .granted:
                grant = RuleDecision(allowed: true, rule: describe(rule, level.node, path, level.depth), detail: .granted)
            case .notGranted(let failure):
                last = (rule, level, failure)
            case .exhausted:
                return exhausted(rule, level.node, path, level.depth)
            }
            if grant != nil { break }
        }
        guard let grant else {
            guard let last else {
                return RuleDecision(allowed: false, rule: nil, detail: .noRule(kind: .write, target: path))
            }
            return RuleDecision(
                allowed: false, rule: describe(last.rule, last.level.node, path, last.level.depth),
                detail: .notGranted(target: path, failure: last.failure?.message))
        }

        for level in levels where !level.newData.isEmpty {
            guard let rule = level.node.validate else { continue }
            context.location = path.keys[0..<level.depth]
            context.data = level.data
            context.newData = level.newData
            if let denial = validate(rule, level.node, path.keys[0..<level.depth], &context) { return denial }
        }

        // The walk reached the write location itself: validate what is written below it.
        if let deepest = levels.last, deepest.depth == path.count, deepest.node.hasChildRules, deepest.newData.hasChildren {
            var keys = path.keys
            let written = deepest.newData.materialized  // the written value itself: already a node
            if let denial = validateSubtree(deepest.node, keys: &keys, data: deepest.data, newData: written, &context) {
                return denial
            }
        }
        return grant
    }

    /// Validates every node strictly below a written location that exists after the write and has
    /// a rule node; nil when all pass. `keys` is the location, extended and restored while visiting.
    private func validateSubtree(
        _ node: RuleNode, keys: inout [ChildKey], data: Node, newData: Node, _ context: inout EvaluationContext
    ) -> RuleDecision? {
        guard node.hasChildRules, newData.hasChildren else { return nil }
        func visit(_ key: ChildKey, _ child: RuleNode, _ childNew: Node, wildcard: Bool) -> RuleDecision? {
            let childData = data.child(key)
            keys.append(key)
            if wildcard { context.captures.append(key.string) }
            defer {
                keys.removeLast()
                if wildcard { context.captures.removeLast() }
            }
            if let rule = child.validate {
                context.location = keys[...]
                context.data = childData
                context.newData = .node(childNew)
                let denial = validate(rule, child, keys[...], &context)
                // Drop the context's hold on `keys` so appending below does not copy it.
                context.location = []
                if let denial { return denial }
            }
            return validateSubtree(child, keys: &keys, data: childData, newData: childNew, &context)
        }
        var denial: RuleDecision?
        if let wildcard = node.wildcard {
            newData.children.forEach { key, childNew in
                if let literal = node.child(key) {
                    denial = visit(key, literal, childNew, wildcard: false)
                } else {
                    denial = visit(key, wildcard, childNew, wildcard: true)
                }
                return denial == nil
            }
        } else {
            for (key, child) in node.children {  // key order, as Firebase visits children
                let childNew = newData.child(key)
                if childNew.isEmpty { continue }
                if let found = visit(key, child, childNew, wildcard: false) { return found }
            }
        }
        return denial
    }

    private func validate(
        _ rule: CompiledRule, _ node: RuleNode, _ keys: ArraySlice<ChildKey>, _ context: inout EvaluationContext
    ) -> RuleDecision? {
        switch evaluate(rule, &context) {
        case .granted: return nil
        case .notGranted(let failure):
            return RuleDecision(
                allowed: false, rule: describe(rule, node, Path(Array(keys))), detail: .validationFailed(failure: failure?.message))
        case .exhausted:
            return RuleDecision(allowed: false, rule: describe(rule, node, Path(Array(keys))), detail: .budgetExhausted)
        }
    }

    // MARK: Shared

    /// The rule node for `key` below `node`: the literal child, else the wildcard (binding the key).
    private func step(from node: RuleNode, key: ChildKey, captures: inout [String]) -> RuleNode? {
        if let literal = node.child(key) { return literal }
        if let wildcard = node.wildcard {
            captures.append(key.string)
            return wildcard
        }
        return nil
    }

    private enum Outcome {
        case granted
        /// False, or a runtime error (which counts as false).
        case notGranted(RuleFailure?)
        case exhausted
    }

    private func evaluate(_ rule: CompiledRule, _ context: inout EvaluationContext) -> Outcome {
        do {
            try context.spend()
            if case .bool(true) = try rule.evaluate(&context) { return .granted }
            return .notGranted(nil)
        } catch .budgetExhausted {
            return .exhausted
        } catch {
            return .notGranted(error)
        }
    }

    private func describe(_ rule: CompiledRule, _ node: RuleNode, _ path: Path) -> RuleDecision.Rule {
        RuleDecision.Rule(kind: rule.kind, pattern: node.pattern, path: path, expression: rule.expression)
    }

    /// The rule at the first `depth` keys of `path`.
    private func describe(_ rule: CompiledRule, _ node: RuleNode, _ path: Path, _ depth: Int) -> RuleDecision.Rule {
        describe(rule, node, depth == path.count ? path : Path(Array(path.keys[0..<depth])))
    }

    private func exhausted(_ rule: CompiledRule, _ node: RuleNode, _ path: Path, _ depth: Int) -> RuleDecision {
        RuleDecision(allowed: false, rule: describe(rule, node, path, depth), detail: .budgetExhausted)
    }
}
