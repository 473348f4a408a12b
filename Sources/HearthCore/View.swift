/// A listener's view of one query at one location: what it has seen, and the events that take it
/// from there to the tree's current state.
///
/// An unfiltered view keeps nothing of the data: a write's `ChangeSet` carries the old node at
/// each written location, which is enough to know what the listener saw before, so the tree's
/// nodes stay uniquely held and writes mutate them in place instead of copying the path a held
/// snapshot would pin. A windowed view keeps its window (at most its limit of children) and
/// recomputes it after a write — through the location's `ChildIndex` when the tree keeps one,
/// which makes that O(log n + window) — then diffs the two, so children sliding in and out of a
/// limit raise added/removed events.
///
///     var view = View(path: "jokes", params: .all, tree: tree)
///     let change = try tree.set("jokes/j9/text", to: Node("knock knock"))
///     view.apply(change, tree: tree)   // [child_added j9 after j8, value]
public struct View: Sendable {
    public let path: Path
    public let params: QueryParams
    /// The window in query order, and as a node (windowed views only).
    private var window: [QueryWindow.Entry]
    private var windowNode: Node

    public init(path: Path, params: QueryParams = .all, tree: DatabaseTree) {
        self.path = path
        self.params = params
        if params.loadsAllData {
            window = []
            windowNode = .empty
        } else {
            window = tree.window(at: path, params: params)
            windowNode = QueryWindow.makeNode(window)
        }
    }

    /// What the listener sees now: the node at `path`, or the window as a node.
    public func value(in tree: DatabaseTree) -> Node {
        params.loadsAllData ? tree.value(at: path) : windowNode
    }

    /// The events a new listener receives: `childAdded` for each child in query order, then `value`.
    public func initialEvents(tree: DatabaseTree) -> [Event] {
        var events: [Event] = []
        var previous: ChildKey?
        for entry in orderedEntries(tree: tree) {
            events.append(Event(type: .childAdded, key: entry.key, node: entry.node, previousKey: previous))
            previous = entry.key
        }
        events.append(Event(type: .value, node: value(in: tree)))
        return events
    }

    /// Brings the view up to date with `tree` after `changes`, returning the events in the order
    /// Firebase raises them. `tree` must be the tree right after `changes` was applied.
    public mutating func apply(_ changes: ChangeSet, tree: DatabaseTree) -> [Event] {
        guard changes.touches(path) else { return [] }
        return params.loadsAllData ? applyUnfiltered(changes, tree: tree) : applyWindowed(changes, tree: tree)
    }

    // MARK: Unfiltered views

    /// One child of the view's location that a change set may have changed.
    private struct AffectedChild {
        var key: ChildKey
        /// Changes below the child, as (path below the child, old node there).
        var olds: [(Path, Node)]
        /// The child's new node, when a change replaced the child itself (no lookup needed).
        var exactNew: Node?
    }

    private func applyUnfiltered(_ changes: ChangeSet, tree: DatabaseTree) -> [Event] {
        if changes.changes.count == 1, changes.changes[0].path.count == path.count + 1 {
            return applyToOneChild(changes.changes[0], tree: tree)
        }
        let new = tree.value(at: path)
        var affected: [AffectedChild] = []
        var oldAtPath: Node?  // set when a change replaced the view's location or an ancestor
        for change in changes.changes {
            if change.path.count > path.count, path.contains(change.path) {
                let key = change.path.keys[path.count]
                let isExact = change.path.count == path.count + 1
                let below = isExact ? Path.root : Path(Array(change.path.keys.dropFirst(path.count + 1)))
                if let i = affected.firstIndex(where: { $0.key == key }) {
                    affected[i].olds.append((below, change.old))
                    affected[i].exactNew = nil
                } else {
                    affected.append(AffectedChild(key: key, olds: [(below, change.old)], exactNew: isExact ? change.new : nil))
                }
            } else if change.path.contains(path) {
                oldAtPath = change.old.child(at: path.relative(to: change.path)!)
            }
        }

        var old: Node?  // only when the location itself was replaced
        var pairs: [(key: ChildKey, before: Node, after: Node)] = []
        if let oldAtPath {
            // The location itself was replaced: diff the two nodes' children. (An update cannot
            // also write below a location it replaces: its paths never overlap.)
            old = oldAtPath
            if isSame(oldAtPath, new) { return [] }
            for key in differingKeys(oldAtPath.children, new.children) {
                pairs.append((key, oldAtPath.child(key), new.child(key)))
            }
        } else {
            // Rebuild only the touched children as they were; rebuilding the whole old node would
            // copy the location's map on every write.
            for child in affected {
                // A change exactly at the child carries its new node: no lookup needed.
                let after = child.exactNew ?? new.child(child.key)
                var before = after
                for (below, oldNode) in child.olds { before.set(below, to: oldNode) }
                pairs.append((child.key, before, after))
            }
        }

        // Child events grouped by type (raise order), each group in the view's order.
        var groups: [[Event]] = [[], [], [], []]
        var positions: [ChildKey: IndexPosition] = [:]
        for (key, before, after) in pairs where !isSame(before, after) {
            positions[key] = IndexPosition(value: params.index.indexValue(of: after.isEmpty ? before : after), key: key)
            var events: [Event] = []
            appendChildEvents(to: &events, key: key, before: before, after: after, in: new, tree: tree)
            for event in events { groups[event.type.raiseOrder].append(event) }
        }
        var events: [Event] = []
        for group in groups where !group.isEmpty {
            events += group.count == 1 ? group : group.sorted { positions[$0.key!]! < positions[$1.key!]! }
        }
        // Writes below the location change it exactly when they change a child, which `events`
        // records. A replaced location can also change in its own priority or as a leaf
        // (comparing whole children nodes here would cost O(n) per write).
        var valueChanged = !events.isEmpty
        if let old, !valueChanged {
            valueChanged = old.priority != new.priority || (!(old.hasChildren && new.hasChildren) && old != new)
        }
        if valueChanged { events.append(Event(type: .value, node: new)) }
        return events
    }

    private func indexValueChanged(_ before: Node, _ after: Node) -> Bool {
        switch params.index {
        case .key: return false
        case .priority: return before.priority != after.priority
        case .value, .child: return params.index.indexValue(of: before) != params.index.indexValue(of: after)
        }
    }

    /// The common case, one write replacing one child of the location, without the bookkeeping
    /// that several changes need (it allocated more than the write itself did).
    private func applyToOneChild(_ change: ChangeSet.Change, tree: DatabaseTree) -> [Event] {
        let key = change.path.keys[path.count]
        let before = change.old, after = change.new
        if isSame(before, after) { return [] }
        let new = tree.value(at: path)
        var events: [Event] = []
        events.reserveCapacity(3)
        appendChildEvents(to: &events, key: key, before: before, after: after, in: new, tree: tree)
        events.append(Event(type: .value, node: new))
        return events
    }

    /// Appends the events for one child that went from `before` to `after` (known to differ), in
    /// raise order: removed; or added; or moved (when its order value changed) and changed.
    private func appendChildEvents(
        to events: inout [Event], key: ChildKey, before: Node, after: Node, in new: Node, tree: DatabaseTree
    ) {
        if after.isEmpty {
            events.append(Event(type: .childRemoved, key: key, node: before))
            return
        }
        let previous = previousKey(of: key, node: after, in: new, tree: tree)
        if before.isEmpty {
            events.append(Event(type: .childAdded, key: key, node: after, previousKey: previous))
            return
        }
        if indexValueChanged(before, after) {
            events.append(Event(type: .childMoved, key: key, node: after, previousKey: previous))
        }
        events.append(Event(type: .childChanged, key: key, node: after, previousKey: previous))
    }

    /// Keys whose children differ between two maps; shared subtrees are skipped by identity.
    private func differingKeys(_ a: ChildrenMap, _ b: ChildrenMap) -> Set<ChildKey> {
        if a.isIdentical(to: b) { return [] }
        var keys = Set<ChildKey>()
        a.forEach { key, value in
            if b[key].map({ !isSame($0, value) }) ?? true { keys.insert(key) }
            return true
        }
        b.forEach { key, _ in
            if a[key] == nil { keys.insert(key) }
            return true
        }
        return keys
    }

    private func isSame(_ a: Node, _ b: Node) -> Bool {
        if a.hasChildren && b.hasChildren && a.priority == b.priority && a.children.isIdentical(to: b.children) { return true }
        return a == b
    }

    /// The key before `key` in the view's order within `node`, without sorting all children:
    /// the key index is the map's order; for other indexes a kept `ChildIndex` gives it in
    /// O(log n); children whose index value is empty (no priority: the common case) sort in key
    /// order ahead of all others, so walking back in the map finds the answer.
    private func previousKey(of key: ChildKey, node child: Node, in node: Node, tree: DatabaseTree) -> ChildKey? {
        let children = node.children
        if case .key = params.index {
            let rank = children.rank(of: key)
            return rank > 0 ? children.element(atRank: rank - 1).key : nil
        }
        let value = params.index.indexValue(of: child)
        if let index = tree.index(at: path, by: params.index) {
            let rank = index.positions.rank(of: IndexPosition(value: value, key: key))
            return rank > 0 ? index.positions.element(atRank: rank - 1).key.key : nil
        }
        if value.isEmpty {
            var found: ChildKey?
            children.forEachReversed(fromRank: children.rank(of: key) - 1) { candidate, child in
                if params.index.indexValue(of: child).isEmpty {
                    found = candidate
                    return false
                }
                return true
            }
            return found
        }
        // No index kept: find the greatest position below this one in one pass.
        let position = IndexPosition(value: value, key: key)
        var best: IndexPosition?
        children.forEach { candidate, child in
            let p = IndexPosition(value: params.index.indexValue(of: child), key: candidate)
            if p < position, best.map({ $0 < p }) ?? true { best = p }
            return true
        }
        return best?.key
    }

    /// Children in the view's order (for initial events).
    private func orderedEntries(tree: DatabaseTree) -> [QueryWindow.Entry] {
        if !params.loadsAllData { return window }
        var all = QueryParams.all
        all.index = params.index
        all.start = QueryBound(value: .empty, name: .min)  // a range that admits everything, so the window is computed
        return tree.window(at: path, params: all)
    }

    // MARK: Windowed views

    private mutating func applyWindowed(_ changes: ChangeSet, tree: DatabaseTree) -> [Event] {
        // Children the changes may have touched; nil when the location itself was replaced.
        var touched: [ChildKey]? = []
        for change in changes.changes {
            if change.path.count > path.count, path.contains(change.path) {
                touched?.append(change.path.keys[path.count])
            } else if change.path.contains(path) {
                touched = nil
            }
        }
        let location = tree.value(at: path)
        var newWindow = QueryWindow.entries(
            of: location, params: params, index: tree.index(at: path, by: params.index), resolvingNodes: false)
        let oldWindow = window

        // Pair each new entry with the old entry of the same key. Both windows are in position
        // order and an untouched child keeps its position, so one merge pass pairs those; the few
        // left (touched, entering or leaving children) are paired by a search. No hashing: it
        // cost more than everything else here (callgrind).
        var pairedOld = [Int](repeating: -1, count: newWindow.count)
        var oldIsPaired = [Bool](repeating: false, count: oldWindow.count)
        var unpaired: [Int] = []
        var j = 0
        for i in newWindow.indices {
            let position = IndexPosition(value: newWindow[i].value, key: newWindow[i].key)
            while j < oldWindow.count, IndexPosition(value: oldWindow[j].value, key: oldWindow[j].key) < position { j += 1 }
            if j < oldWindow.count, oldWindow[j].key == newWindow[i].key {
                pairedOld[i] = j
                oldIsPaired[j] = true
            } else {
                unpaired.append(i)
            }
        }
        for i in unpaired {
            if let j = oldWindow.indices.first(where: { !oldIsPaired[$0] && oldWindow[$0].key == newWindow[i].key }) {
                pairedOld[i] = j
                oldIsPaired[j] = true
            }
        }
        for i in newWindow.indices where newWindow[i].node.isEmpty {
            let key = newWindow[i].key
            let isTouched = touched.map { $0.contains(key) } ?? true
            if pairedOld[i] >= 0 && !isTouched {
                newWindow[i].node = oldWindow[pairedOld[i]].node
            } else {
                newWindow[i].node = location.child(key)
            }
        }

        var removed: [Event] = [], added: [Event] = [], moved: [Event] = [], changed: [Event] = []
        var previous: ChildKey?
        for (i, entry) in newWindow.enumerated() {
            if pairedOld[i] >= 0 {
                let before = oldWindow[pairedOld[i]].node
                if !isSame(before, entry.node) {
                    if indexValueChanged(before, entry.node) {
                        moved.append(Event(type: .childMoved, key: entry.key, node: entry.node, previousKey: previous))
                    }
                    changed.append(Event(type: .childChanged, key: entry.key, node: entry.node, previousKey: previous))
                }
            } else {
                added.append(Event(type: .childAdded, key: entry.key, node: entry.node, previousKey: previous))
            }
            previous = entry.key
        }
        for (j, entry) in oldWindow.enumerated() where !oldIsPaired[j] {
            removed.append(Event(type: .childRemoved, key: entry.key, node: entry.node))
        }
        window = newWindow
        if removed.isEmpty && added.isEmpty && changed.isEmpty { return [] }
        // Patch the window node rather than rebuild it: a few changes in a window of fifty.
        var map = windowNode.children
        windowNode = .empty
        for event in removed { map.removeValue(for: event.key!) }
        for event in added + changed { map[event.key!] = event.node }
        windowNode = Node(children: map)
        var events = removed + added + moved + changed
        events.append(Event(type: .value, node: windowNode))
        return events
    }
}
