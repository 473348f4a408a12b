import HearthCore

/// The client's data and events (ARCHITECTURE.md, "Decide in values"): what the server sent for each listen, the writes
/// made here and not yet acknowledged, the views listeners watch, and the events that take each view
/// from what its listeners saw to what is now visible. Pure: no I/O, no clocks, no threads; the
/// ``Repo`` feeds it and acts on its ``SyncOutput``.
///
/// Model (the official SDKs' sync tree, as Firebase's own specification of it, syncPointSpec.json, has it:
/// SyncPointSpecTests runs it):
/// - Default listens (no range or limit) share one server cache, `serverTree`, known whole where
///   `complete` says; the visible tree `eventTree` is that cache with the pending writes applied in order.
///   Their views are HearthCore ``View``s over `eventTree`.
/// - A filtered query has its own tagged listen, its own server data (a ``QueryCache``, which also takes
///   the untagged data sent for default listens) and its own visible tree.
/// - A view is complete once its data is known whole: the server sent it (a push at or above the view's
///   location, or the listen's `ok`), or a pending write covers the location. A complete view raises
///   child events and `value`; an incomplete one raises child events only, and only for the children it
///   knows whole (the official SDKs' "complete children"): local writes show at once, partial data not.
/// - An operation's events come view by view: views below before the views above them, siblings in key
///   order, views at one location in the order they were made (the official sync tree applies each
///   operation to a location's descendants first).
struct SyncTree: Sendable {
    private(set) var serverTree = DatabaseTree()
    private(set) var eventTree = DatabaseTree()
    private var complete = CompleteLocations()
    private var writes = PendingWrites()
    private var views: [QuerySpec: SyncView] = [:]
    private var defaultViews = PathTrie<QuerySpec>()
    private var filteredViews = PathTrie<QuerySpec>()
    private var registrations: [RegistrationID: (spec: QuerySpec, type: ListenEventType)] = [:]
    private var listenUsers: [ListenKey: Set<QuerySpec>] = [:]
    private var tagBySpec: [QuerySpec: Int64] = [:]
    private var specByTag: [Int64: QuerySpec] = [:]
    private var nextTag: Int64 = 1
    private var viewsMade = 0
    /// Windows read from the disk cache for filtered views about to be created.
    private var cachedWindows: [QuerySpec: Node] = [:]

    // MARK: Listeners

    /// Adds a listener; returns its initial events (child events for what is known, `value` when
    /// complete) and the listen to start when the view is new.
    mutating func addRegistration(_ id: RegistrationID, spec: QuerySpec, type: ListenEventType) -> SyncOutput {
        var output = SyncOutput()
        if views[spec] == nil { createView(spec, output: &output) }
        views[spec]!.registrations[id] = type
        registrations[id] = (spec, type)
        let isComplete = isComplete(spec)
        if spec.isDefault && !isComplete && views[spec]!.wantsChildEvents && views[spec]!.shown == nil {
            views[spec]!.show(knownNode(spec.path))  // its first child listener: show the children known whole
        }
        if spec.isDefault && !views[spec]!.wantsChildEvents {
            views[spec]!.lastValue = isComplete ? eventTree.value(at: spec.path) : nil
        }
        let events = views[spec]!.initialEvents(for: type, isComplete: isComplete, eventTree: eventTree)
        output.events += SyncView.raised(events, for: [id: type], spec: spec)
        return output
    }

    /// Removes a listener; returns the listen to stop when it was its view's last.
    mutating func removeRegistration(_ id: RegistrationID) -> SyncOutput {
        guard let (spec, _) = registrations.removeValue(forKey: id) else { return SyncOutput() }
        views[spec]?.registrations[id] = nil
        var output = SyncOutput()
        if views[spec]?.registrations.isEmpty == true {
            removeView(spec, output: &output)
        } else if spec.isDefault && views[spec]?.wantsChildEvents == false {
            // Value listeners only from now on: no children to show; values are compared instead.
            let value = isComplete(spec) ? eventTree.value(at: spec.path) : nil
            views[spec]?.shown = nil
            views[spec]?.lastValue = value
        }
        return output
    }

    var registrationIDs: Dictionary<RegistrationID, (spec: QuerySpec, type: ListenEventType)>.Keys { registrations.keys }

    func spec(of registration: RegistrationID) -> QuerySpec? { registrations[registration]?.spec }

    private mutating func createView(_ spec: QuerySpec, output: inout SyncOutput) {
        let key: ListenKey
        let order = viewsMade
        viewsMade += 1
        if spec.isDefault {
            views[spec] = SyncView(spec: spec, order: order, eventTree: eventTree)
            defaultViews.insert(spec, at: spec.path)
            key = ListenKey(path: spec.path, tag: nil)
        } else {
            let tag = nextTag
            nextTag += 1
            tagBySpec[spec] = tag
            specByTag[tag] = spec
            var cache = QueryCache(params: spec.query.params)
            if let cached = cachedWindows.removeValue(forKey: spec) {
                // From the disk cache: the window as the server last sent it, served until it sends again.
                cache.node = cached
                cache.isComplete = true
                cache.isWindow = true
            } else if complete.contains(spec.path) {
                // Covered by a complete default listen: its data, unfiltered, until the query's own comes.
                cache.node = serverTree.value(at: spec.path)
                cache.isComplete = true
            } else {
                // The children known whole so far, as a default view would show them.
                cache.node = serverChildrenKnown(spec.path)
            }
            views[spec] = SyncView(spec: spec, order: order, cache: cache, writes: writes.overlapping(spec.path))
            filteredViews.insert(spec, at: spec.path)
            key = ListenKey(path: spec.path, tag: tag)
        }
        views[spec]!.wasComplete = isComplete(spec)
        var users = listenUsers[key] ?? []
        if users.isEmpty { output.listens.append(.start(key, spec.isDefault ? nil : spec.query, hash: listenHash(key))) }
        users.insert(spec)
        listenUsers[key] = users
    }

    private mutating func removeView(_ spec: QuerySpec, output: inout SyncOutput) {
        guard views.removeValue(forKey: spec) != nil else { return }
        let key = listenKey(of: spec)
        if spec.isDefault {
            defaultViews.remove(at: spec.path) { $0 == spec }
            releaseCompleteness(under: spec.path)
        } else {
            filteredViews.remove(at: spec.path) { $0 == spec }
            if let tag = tagBySpec.removeValue(forKey: spec) { specByTag[tag] = nil }
        }
        listenUsers[key]?.remove(spec)
        if listenUsers[key]?.isEmpty == true {
            listenUsers[key] = nil
            output.listens.append(.stop(key, spec.isDefault ? nil : spec.query))
        }
    }

    private func listenKey(of spec: QuerySpec) -> ListenKey {
        ListenKey(path: spec.path, tag: spec.isDefault ? nil : tagBySpec[spec])
    }

    /// Every listen the server should hold now, with the hash of what is cached for it: what a new
    /// connection sends (docs/protocol.md §1.9).
    var activeListens: [(ListenKey, WireQuery?, hash: String)] {
        listenUsers.keys.sorted { ($0.path, $0.tag ?? 0) < ($1.path, $1.tag ?? 0) }.map { key in
            let query = key.tag.flatMap { specByTag[$0]?.query }
            return (key, query, listenHash(key))
        }
    }

    /// The hash of the data cached for a listen (`h`): what the server would send it (a query's window),
    /// or `""` when nothing complete is cached (§2.4).
    func listenHash(_ key: ListenKey) -> String {
        if let tag = key.tag {
            guard let spec = specByTag[tag], let cache = views[spec]?.cache, cache.isComplete else { return "" }
            return cache.windowHash
        }
        guard complete.contains(key.path) else { return "" }
        return serverTree.value(at: key.path).hash
    }

    // MARK: Server data

    /// A `d` push: `node` replaces what is at `path` (for a tagged query, in its view only). Data at or
    /// above a location is all of it there: it completes the default listens it reaches
    /// (``markReceived(_:)``). Untagged data goes to the filtered views it reaches too: the official SDKs
    /// send it to every view at a location.
    mutating func applyServerOverwrite(at path: Path, _ node: Node, tag: Int64?) -> SyncOutput {
        if let tag {
            guard let spec = specByTag[tag], views[spec]?.cache != nil else { return SyncOutput() }
            if let (relative, value) = Self.relative(path, node, to: spec.path) {
                views[spec]!.cache!.applyOverwrite(at: relative, value, tagged: true)
            }
            return raiseEvents(for: [spec])
        }
        serverTree.put(path, node)
        markReceived(path)
        for spec in filteredViews.valuesOverlapping(path) {
            guard let (relative, value) = Self.relative(path, node, to: spec.path) else { continue }
            views[spec]?.cache?.applyOverwrite(at: relative, value, tagged: false)
        }
        return refreshVisible(at: [path])
    }

    /// An `m` push: each relative path's node replaces what is there. It completes the default views its
    /// keys cover, not the location it merges into: that location's other children are still unknown, and
    /// a key below an incomplete view is not trusted as one of its complete children either (the official
    /// SDKs ignore a merge into a view that holds nothing yet: it belongs to an earlier listen there).
    mutating func applyServerMerge(at path: Path, _ children: [(Path, Node)], tag: Int64?) -> SyncOutput {
        let entries = children.map { (path.appending(path: $0.0), $0.1) }
        if let tag {
            guard let spec = specByTag[tag], views[spec]?.cache != nil else { return SyncOutput() }
            applyMerge(entries, toQuery: spec, tagged: true)
            return raiseEvents(for: [spec])
        }
        var queries = Set<QuerySpec>()
        for (location, node) in entries {
            serverTree.put(location, node)
            if location.last != .priorityKey {
                for spec in defaultViews.valuesAtOrBelow(location) { complete.mark(spec.path) }
            }
            queries.formUnion(filteredViews.valuesOverlapping(location))
        }
        for spec in queries { applyMerge(entries, toQuery: spec, tagged: false) }
        return refreshVisible(at: entries.map(\.0))
    }

    /// A merge as one query's view takes it: a key at or above the view's location replaces its data
    /// (keys never lie inside one another, so it is the only one that reaches the view); keys below merge.
    private mutating func applyMerge(_ entries: [(Path, Node)], toQuery spec: QuerySpec, tagged: Bool) {
        var below: [(Path, Node)] = []
        for (location, node) in entries {
            if let above = spec.path.relative(to: location) {
                views[spec]?.cache?.applyOverwrite(at: .root, node.child(at: above), tagged: tagged)
                return
            }
            if let inside = location.relative(to: spec.path) { below.append((inside, node)) }
        }
        if !below.isEmpty { views[spec]?.cache?.applyMerge(below, tagged: tagged) }
    }

    /// Server data at `path` as a view at `location` sees it: where it lands relative to the location
    /// (`.root` when it replaces all of it), and what lands there; nil when it misses the location.
    private static func relative(_ path: Path, _ node: Node, to location: Path) -> (Path, Node)? {
        if let above = location.relative(to: path) { return (.root, node.child(at: above)) }
        if let inside = path.relative(to: location) { return (inside, node) }
        return nil
    }

    /// The listen's `ok`: its data has all come, even when the server sent none (its hash matched what is
    /// cached), so its views are complete (docs/protocol.md §2.4).
    mutating func listenComplete(_ key: ListenKey) -> SyncOutput {
        if let tag = key.tag {
            guard let spec = specByTag[tag], views[spec]?.cache != nil else { return SyncOutput() }
            views[spec]!.cache!.listenCompleted()
            return raiseEvents(for: [spec])
        }
        guard listenUsers[key] != nil else { return SyncOutput() }
        complete.mark(key.path)
        return raiseEvents(for: defaultViews.valuesAtOrBelow(key.path))
    }

    /// The listen was refused or revoked (`c`, a failed `q`): its views' listeners are cancelled.
    mutating func listenFailed(_ key: ListenKey, status: String, reason: String?) -> SyncOutput {
        var output = SyncOutput()
        let specs: [QuerySpec]
        if let tag = key.tag {
            specs = specByTag[tag].map { [$0] } ?? []
        } else {
            specs = Array(listenUsers[key] ?? [])
        }
        for spec in specs {
            guard let state = views[spec] else { continue }
            for id in state.registrations.keys.sorted() {
                output.cancelled.append((id, status, reason))
                registrations[id] = nil
            }
            views[spec]?.registrations = [:]
            var ignored = SyncOutput()
            removeView(spec, output: &ignored)  // the server already dropped the listen
        }
        return output
    }

    /// `c` without a query: every listen at the location (Android's and iOS's reading, §3.3).
    func listenKeys(at path: Path) -> [ListenKey] {
        listenUsers.keys.filter { $0.path == path }
    }

    func listenKey(forQuery query: WireQuery?, at path: Path) -> ListenKey? {
        guard let query else { return listenUsers[ListenKey(path: path, tag: nil)] != nil ? ListenKey(path: path, tag: nil) : nil }
        return tagBySpec[QuerySpec(path: path, query: query)].map { ListenKey(path: path, tag: $0) }
    }

    /// Data from the disk cache for a view about to be created: it serves the view's listeners at once,
    /// as complete, and its hash goes with the listen so an unchanged location is not sent again.
    mutating func applyCachedData(_ node: Node, for spec: QuerySpec) -> SyncOutput {
        guard views[spec] == nil else { return SyncOutput() }
        if !spec.isDefault {
            cachedWindows[spec] = node
            return SyncOutput()
        }
        serverTree.put(spec.path, node)
        complete.mark(spec.path)
        return refreshVisible(at: [spec.path])
    }

    // MARK: Local writes

    /// A local set, visible at once unless `visible` is false (a transaction without local events).
    mutating func applyUserWrite(_ write: PendingWrite) -> SyncOutput {
        writes.insert(write)
        guard write.visible else { return SyncOutput() }
        // The visible tree already holds every earlier write: this one goes on top, without
        // recomputing the location from the server's data and all pending writes.
        return refreshVisible(at: write.locations, applying: write)
    }

    /// The server answered write `id`: it leaves the pending writes; a refused one (`revert`) is undone
    /// with the events that takes, an accepted one's data stays (``keepAcknowledged(_:)``).
    mutating func ackWrite(_ id: Int64, revert: Bool) -> SyncOutput {
        guard let write = writes.remove(id) else { return SyncOutput() }
        if !revert { keepAcknowledged(write) }
        return refreshVisible(at: write.locations)
    }

    /// Replaces a pending write's data (a transaction rerun), keeping its place in the order.
    mutating func replaceWrite(_ write: PendingWrite) -> SyncOutput {
        guard let old = writes.remove(write.id) else { return applyUserWrite(write) }
        writes.insert(write)
        return refreshVisible(at: old.locations + write.locations)
    }

    /// Every pending write undone (`purgeOutstandingWrites`, or the client's own aborts).
    mutating func removeAllWrites() -> SyncOutput {
        let locations = writes.allLocations
        writes.removeAll()
        return refreshVisible(at: locations)
    }

    /// An accepted write's data stays visible. Where no complete listen covers it, it becomes the cached
    /// server data (the server would have sent it otherwise; the official SDKs keep it in their views'
    /// complete caches), complete for the default listens it reaches. Server data that came whole below
    /// it meanwhile (a complete location) is newer than the write and stays.
    private mutating func keepAcknowledged(_ write: PendingWrite) {
        for location in write.locations where !complete.contains(location) {
            var value = write.apply(to: serverTree.value(at: location), at: location)
            for newer in complete.marks(below: location) {
                value.set(newer.relative(to: location)!, to: serverTree.value(at: newer))
            }
            serverTree.put(location, value)
            markReceived(location)
        }
    }

    // MARK: Reading

    /// What is visible at `path`: the server's data with the pending writes over it, excluding those in
    /// `excluding` (a transaction computes from the state without its own write).
    func visibleValue(at path: Path, excluding: Set<Int64> = []) -> Node {
        let overlapping = writes.overlapping(path)
        // The newest write that replaces the whole node makes the server's data and every older write
        // there irrelevant: the writes are applied from it. (A client writing one location offline holds
        // thousands; applying them all on every acknowledgement made draining them quadratic.)
        let shown = { (write: PendingWrite) in write.visible && !excluding.contains(write.id) }
        let newestCovering = overlapping.lastIndex { shown($0) && $0.covers(path) }
        var node = newestCovering == nil ? serverTree.value(at: path) : .empty
        for write in overlapping[(newestCovering ?? 0)...] where shown(write) {
            node = write.apply(to: node, at: path)
        }
        return node
    }

    /// The value a complete view shows for `spec`, or nil when nothing complete covers it.
    func completeValue(_ spec: QuerySpec) -> Node? {
        if let state = views[spec], isComplete(spec) {
            return spec.isDefault ? state.view.value(in: eventTree) : state.view.value(in: state.tree)
        }
        guard isComplete(spec) else { return nil }
        let node = eventTree.value(at: spec.path)
        return spec.isDefault ? node : QueryWindow.node(of: node, params: spec.query.params)
    }

    func hasView(_ spec: QuerySpec) -> Bool { views[spec] != nil }

    var viewCount: Int { views.count }

    // MARK: Completeness

    private func isComplete(_ spec: QuerySpec) -> Bool {
        if writes.cover(spec.path) { return true }
        if spec.isDefault { return complete.contains(spec.path) }
        return views[spec]?.cache?.isComplete ?? false
    }

    /// Data for `path` came whole (a push there, or an acknowledged write): it is complete for the default
    /// listens it reaches. All of it when one is at or above it, which keeps it current; else only the
    /// locations of those below it, which keep their own parts current.
    private mutating func markReceived(_ path: Path) {
        guard path.last != .priorityKey else { return }  // a priority alone does not make a node known
        if !defaultViews.valuesAtOrAbove(path).isEmpty {
            complete.mark(path)
        } else {
            for spec in defaultViews.valuesBelow(path) { complete.mark(spec.path) }
        }
    }

    /// A default view went from `path`: completeness no default listen keeps current any more (the server
    /// stops sending changes there) goes, except at the default views below it, whose own listens keep
    /// their data current.
    private mutating func releaseCompleteness(under path: Path) {
        for mark in complete.marks(atOrBelow: path) where defaultViews.valuesAtOrAbove(mark).isEmpty {
            complete.unmark(mark)
            for spec in defaultViews.valuesBelow(mark).sorted(by: { $0.path.count < $1.path.count }) {
                complete.mark(spec.path)
            }
        }
    }

    /// The children of `path` known whole (server data marked complete, or covered by a pending write),
    /// as they are visible: what an incomplete default view shows.
    private func knownNode(_ path: Path) -> Node {
        var node = Node.empty
        for key in Set(complete.markedChildKeys(of: path) + writes.childKeysWritten(under: path)) {
            node.setChild(key, to: eventTree.value(at: path.appending(key)))
        }
        return node
    }

    /// The server's children of `path` known whole: what a new query view starts from when nothing
    /// complete covers its location.
    private func serverChildrenKnown(_ path: Path) -> Node {
        var node = Node.empty
        for key in complete.markedChildKeys(of: path) { node.setChild(key, to: serverTree.value(at: path.appending(key))) }
        return node
    }

    // MARK: Events

    /// Brings the visible tree up to date at `written` (from the server cache and the pending writes, or
    /// by putting `newest` on top) and raises the events that took, in every view it reaches.
    private mutating func refreshVisible(at written: [Path], applying newest: PendingWrite? = nil) -> SyncOutput {
        // A priority write changes its node: refresh the node.
        var locations = written.map { $0.last == .priorityKey ? ($0.parent ?? $0) : $0 }
        if newest == nil { locations = locations.map(refreshLocation(for:)) }
        // A location inside another (or the same one twice: a transaction rerun refreshes its old and new
        // write's) is refreshed with it, once: a view rebuilds what it showed from each change's old node,
        // and a second change's old node is the first one's new node.
        locations = Path.outermost(locations)
        var changes = ChangeSet()
        var reached = Set<QuerySpec>()
        for location in locations {
            let value = newest.map { $0.apply(to: eventTree.value(at: location), at: location) } ?? visibleValue(at: location)
            changes.changes.append(eventTree.replace(location, with: value))
            reached.formUnion(defaultViews.valuesOverlapping(location))
            reached.formUnion(filteredViews.valuesOverlapping(location))
        }
        return raiseEvents(for: Array(reached), changes: changes, at: locations)
    }

    /// Where to refresh the visible tree for a change at `location`: there, unless the visible data now
    /// ends in a leaf above it (a write below a leaf was undone), which a refresh of the location alone
    /// would not bring back. At most one ancestor can be a leaf: a leaf has nothing below it.
    private func refreshLocation(for location: Path) -> Path {
        guard !location.isRoot, visibleValue(at: location).isEmpty else { return location }
        // Where a leaf can be: in the server's data, or in a pending write above the location.
        var candidates: [Int] = []
        if let depth = Self.leafDepth(in: serverTree.root, along: location.keys[...]) { candidates.append(depth) }
        for write in writes.atOrAbove(location) where write.visible {
            for (target, value) in write.placements where target.count < location.count && target.contains(location) {
                if let depth = Self.leafDepth(in: value, along: location.keys[target.count...]) {
                    candidates.append(target.count + depth)
                }
            }
        }
        for depth in candidates {
            let ancestor = Path(Array(location.keys.prefix(depth)))
            if visibleValue(at: ancestor).isLeaf { return ancestor }
        }
        return location
    }

    /// How many of `keys` lead from `node` to the first leaf on their way, when one is met before their end.
    private static func leafDepth(in node: Node, along keys: ArraySlice<ChildKey>) -> Int? {
        var node = node
        for (depth, key) in keys.enumerated() {
            if node.isLeaf { return depth }
            node = node.child(key)
            if node.isEmpty { return nil }
        }
        return nil
    }

    /// Raises the events of `specs`' views, in Firebase's order, after `changes` to `eventTree` at
    /// `locations` (none when only completeness or a query's own data changed).
    private mutating func raiseEvents(
        for specs: [QuerySpec], changes: ChangeSet = ChangeSet(), at locations: [Path] = []
    ) -> SyncOutput {
        var output = SyncOutput()
        for spec in inRaiseOrder(specs) {
            guard views[spec] != nil else { continue }
            let isComplete = isComplete(spec)
            // Taken out while it changes: the closures below read the sync tree.
            var view = views.removeValue(forKey: spec)!
            let events: [Event]
            if spec.isDefault {
                events = view.defaultViewEvents(
                    isComplete: isComplete, eventTree: eventTree, changes: changes, at: locations,
                    knownChild: { complete.contains(spec.path.appending($0)) || writes.cover(spec.path.appending($0)) },
                    knownNode: { knownNode(spec.path) })
            } else {
                events = view.filteredViewEvents(writes: writes.overlapping(spec.path))
            }
            output.events += view.raise(events, isComplete: isComplete, eventTree: eventTree)
            views[spec] = view
        }
        return output
    }

    /// Views below before the views above them, siblings in key order, views at one location in the
    /// order they were made.
    private func inRaiseOrder(_ specs: [QuerySpec]) -> [QuerySpec] {
        guard specs.count > 1 else { return specs }
        return specs.sorted { a, b in
            if a.path != b.path {
                for (x, y) in zip(a.path.keys, b.path.keys) where x != y { return x < y }
                return a.path.count > b.path.count
            }
            return (views[a]?.order ?? 0) < (views[b]?.order ?? 0)
        }
    }
}
