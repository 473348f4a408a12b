import HearthCore

/// One view of the sync tree: a query at a location, its listeners, and what they have been shown. It
/// turns changes into the events that take those listeners to what is now visible; ``SyncTree`` decides
/// which views an operation reaches, whether each is complete, and in which order they raise.
struct SyncView: Sendable {
    let spec: QuerySpec
    var view: View
    /// When the view was made, counted over all views: views at one location raise events in this order.
    let order: Int
    var registrations: [RegistrationID: ListenEventType] = [:]
    /// Whether the view was complete after the last operation that touched it.
    var wasComplete = false
    /// Filtered views only: the server's data for the query, and the visible tree (that data with the
    /// pending writes over it).
    var cache: QueryCache?
    var tree = DatabaseTree()
    /// Incomplete default views with child listeners: what those were shown, the children known whole
    /// only. Nil once complete: the view then shows the sync tree's visible tree.
    var shown: DatabaseTree?
    /// Default views whose listeners want only `value`: the value they last saw, compared instead of
    /// computing child events nobody asked for (a 10,000-child first load computed 10,000 of them).
    var lastValue: Node?

    /// A default view, over the sync tree's visible tree.
    init(spec: QuerySpec, order: Int, eventTree: DatabaseTree) {
        self.spec = spec
        self.order = order
        view = View(path: spec.path, params: spec.query.params, tree: eventTree)
    }

    /// A filtered view, over its own data and the pending writes.
    init(spec: QuerySpec, order: Int, cache: QueryCache, writes: [PendingWrite]) {
        self.spec = spec
        self.order = order
        self.cache = cache
        tree.put(spec.path, cache.visible(at: spec.path, with: writes))
        view = View(path: spec.path, params: spec.query.params, tree: tree)
    }

    var wantsChildEvents: Bool {
        registrations.values.contains { $0 != .value && $0 != .none }
    }

    /// The tree the view's listeners see now, `eventTree` being the sync tree's visible tree.
    func visibleTree(_ eventTree: DatabaseTree) -> DatabaseTree {
        cache != nil ? tree : (shown ?? eventTree)
    }

    /// A new listener's first events: child events for what the view shows, `value` when complete.
    func initialEvents(for type: ListenEventType, isComplete: Bool, eventTree: DatabaseTree) -> [Event] {
        let tree = visibleTree(eventTree)
        var events: [Event]
        if type == .value || type == .none {
            events = [Event(type: .value, node: view.value(in: tree))]
        } else {
            events = view.initialEvents(tree: tree)
        }
        if !isComplete { events.removeAll { $0.type == .value } }
        return events
    }

    /// A default view's events after `changes` to `eventTree` at `locations`: from those changes while
    /// complete; while incomplete, from the children known whole (`knownChild`, `knownNode`), and from
    /// those to the whole location once it becomes complete.
    mutating func defaultViewEvents(
        isComplete: Bool, eventTree: DatabaseTree, changes: ChangeSet, at locations: [Path],
        knownChild: (ChildKey) -> Bool, knownNode: () -> Node
    ) -> [Event] {
        let path = spec.path
        if !wantsChildEvents {
            guard isComplete else {
                lastValue = nil
                return []
            }
            let new = eventTree.value(at: path)
            if let old = lastValue, Self.isSame(old, new) { return [] }
            lastValue = new
            return [Event(type: .value, node: new)]
        }
        lastValue = nil
        if isComplete {
            guard var shown else { return view.apply(changes, tree: eventTree) }
            self.shown = nil
            let change = shown.put(path, eventTree.value(at: path))
            return view.apply(ChangeSet([change]), tree: shown)
        }
        var shown: DatabaseTree
        var refreshAll = locations.contains { $0.contains(path) }
        if let current = self.shown {
            shown = current
        } else {
            // Complete until now (a write covering it was undone): it showed the whole location.
            shown = DatabaseTree()
            shown.put(path, Self.node(at: path, before: changes, in: eventTree))
            refreshAll = true
        }
        var shownChanges = ChangeSet()
        if refreshAll {
            shownChanges.changes.append(shown.put(path, knownNode()))
        } else {
            let keys = Set(locations.compactMap { $0.count > path.count && path.contains($0) ? $0.keys[path.count] : nil })
            for key in keys {
                let child = path.appending(key)
                shownChanges.changes.append(shown.put(child, knownChild(key) ? eventTree.value(at: child) : .empty))
            }
        }
        self.shown = shown
        return view.apply(shownChanges, tree: shown)
    }

    /// Starts showing an incomplete default view's children known whole (`known`) to child listeners.
    mutating func show(_ known: Node) {
        var shown = DatabaseTree()
        shown.put(spec.path, known)
        self.shown = shown
    }

    /// A filtered view's events: its visible tree recomputed from its data and the pending writes.
    mutating func filteredViewEvents(writes: [PendingWrite]) -> [Event] {
        guard let cache else { return [] }
        let change = tree.put(spec.path, cache.visible(at: spec.path, with: writes))
        return view.apply(ChangeSet([change]), tree: tree)
    }

    /// The listeners' events for the view's `events`: `value` only while complete, and once when the view
    /// becomes complete without its data changing.
    mutating func raise(_ events: [Event], isComplete: Bool, eventTree: DatabaseTree) -> [RaisedEvent] {
        var events = events
        if !isComplete {
            events.removeAll { $0.type == .value }
        } else if !wasComplete && !events.contains(where: { $0.type == .value }) {
            events.append(Event(type: .value, node: view.value(in: visibleTree(eventTree))))
        }
        wasComplete = isComplete
        return Self.raised(events, for: registrations, spec: spec)
    }

    /// Each event for each listener that asked for its type, listeners in the order they came.
    static func raised(_ events: [Event], for registrations: [RegistrationID: ListenEventType], spec: QuerySpec) -> [RaisedEvent] {
        guard !events.isEmpty, !registrations.isEmpty else { return [] }
        var raised: [RaisedEvent] = []
        let ordered = registrations.sorted { $0.key < $1.key }
        for event in events {
            let type = ListenEventType(event.type)
            let path = event.key.map { spec.path.appending($0) } ?? spec.path
            for (id, wanted) in ordered where wanted == type {
                raised.append(RaisedEvent(
                    registration: id, type: event.type, path: path, node: event.node, previousKey: event.previousKey,
                    index: spec.query.index))
            }
        }
        return raised
    }

    /// The node `tree` held at `path` before `changes` (its latest changes), undone latest first.
    private static func node(at path: Path, before changes: ChangeSet, in tree: DatabaseTree) -> Node {
        var node = tree.value(at: path)
        for change in changes.changes.reversed() {
            if let inside = change.path.relative(to: path) {
                node.set(inside, to: change.old)
            } else if let above = path.relative(to: change.path) {
                node = change.old.child(at: above)
            }
        }
        return node
    }

    /// Equal nodes, children maps compared by identity first (a location rewritten with the same data
    /// shares nothing, but an unchanged one is the same map).
    private static func isSame(_ a: Node, _ b: Node) -> Bool {
        if a.hasChildren && b.hasChildren && a.priority == b.priority && a.children.isIdentical(to: b.children) { return true }
        return a == b
    }
}
