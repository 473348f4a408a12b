import HearthCore

/// Which listener a raised event is for: the handle `observe` returned.
typealias RegistrationID = UInt

/// A view's identity: a location and the query at it (the index matters: it orders the events).
struct QuerySpec: Hashable, Sendable, CustomStringConvertible {
    var path: Path
    var query: WireQuery

    init(path: Path, query: WireQuery = WireQuery()) {
        self.path = path
        self.query = query
    }

    /// Served by the location's default listen (no range, no limit, whatever the order).
    var isDefault: Bool { query.loadsAllData }
    var description: String { "\(path.slashed) \(query.identifier)" }
}

/// A server listen: a location and, for a filtered query, its tag (docs/protocol.md §2.4).
struct ListenKey: Hashable, Sendable {
    var path: Path
    var tag: Int64?
}

/// What a listener asked for: one event type.
enum ListenEventType: Sendable, Equatable {
    case value, childAdded, childChanged, childRemoved, childMoved
    /// Keeps the view alive and its data synced, with no events (`keepSynced`, transactions).
    case none

    init(_ type: EventType) {
        switch type {
        case .value: self = .value
        case .childAdded: self = .childAdded
        case .childChanged: self = .childChanged
        case .childRemoved: self = .childRemoved
        case .childMoved: self = .childMoved
        }
    }
}

/// An event for one listener, ready to become a snapshot.
struct RaisedEvent: Sendable {
    var registration: RegistrationID
    var type: EventType
    /// Where the snapshot is: the view's location, or the child's for child events.
    var path: Path
    var node: Node
    var previousKey: ChildKey?
    /// The view's order: the snapshot enumerates its children in it.
    var index: QueryIndex
}

/// A write made here and not yet acknowledged by the server.
struct PendingWrite: Sendable {
    enum Kind: Sendable {
        case set(Path, Node)
        case merge(Path, [(Path, Node)])
    }

    var id: Int64
    /// Server values already resolved (what local events show).
    var kind: Kind
    /// False for a transaction run without local events.
    var visible: Bool

    /// Every location the write replaces.
    var locations: [Path] {
        switch kind {
        case .set(let path, _): [path]
        case .merge(let path, let children): children.map { path.appending(path: $0.0) }
        }
    }

    /// Whether the write can change what is at `location` (or below it).
    func touches(_ location: Path) -> Bool {
        switch kind {
        case .set(let path, _): return path.overlaps(location)
        case .merge(let path, let children):
            return path.overlaps(location) && children.contains { path.appending(path: $0.0).overlaps(location) }
        }
    }

    /// The node at `location` once this write is applied over `base` (the node there before it).
    func apply(to base: Node, at location: Path) -> Node {
        guard touches(location) else { return base }
        var result = base
        func place(_ path: Path, _ value: Node) {
            if let below = location.relative(to: path) {
                result = value.child(at: below)  // the write covers the location
            } else if let inside = path.relative(to: location) {
                result.set(inside, to: value)  // the write lands inside it
            }
        }
        switch kind {
        case .set(let path, let value): place(path, value)
        case .merge(let path, let children): for (child, value) in children { place(path.appending(path: child), value) }
        }
        return result
    }
}

/// What one operation on the sync tree asks of its caller: events to raise, listeners whose listen
/// failed, and listens to start or stop on the server.
struct SyncOutput: Sendable {
    var events: [RaisedEvent] = []
    var cancelled: [(registration: RegistrationID, status: String, reason: String?)] = []
    var listens: [ListenChange] = []

    mutating func append(_ other: SyncOutput) {
        events += other.events
        cancelled += other.cancelled
        listens += other.listens
    }
}

enum ListenChange: Sendable {
    case start(ListenKey, WireQuery?, hash: String)
    case stop(ListenKey, WireQuery?)
}

/// The client's data and events (ARCHITECTURE.md, "Decide in values"): what the server sent for each listen, the writes
/// made here and not yet acknowledged, the views listeners watch, and the events that take each view
/// from what its listeners saw to what is now visible. Pure: no I/O, no clocks, no threads; the
/// ``Repo`` feeds it and acts on its ``SyncOutput``.
///
/// Model (the official SDKs' sync tree, simplified):
/// - Default listens (no range or limit) share one server cache, `serverTree`, complete at the
///   locations whose listen completed; the visible tree `eventTree` is that cache with the pending
///   writes applied in order. Their views are HearthCore ``View``s over `eventTree`.
/// - A filtered query has its own tagged listen, its own server window and its own visible tree.
/// - A view raises child events for any change (local writes show at once) and its `value` event only
///   once complete: its listen completed, or a pending set covers its location.
struct SyncTree: Sendable {
    private(set) var serverTree = DatabaseTree()
    private(set) var eventTree = DatabaseTree()
    private var completeLocations: Set<Path> = []
    private var completeIndex = PathTrie<Path>()
    /// Pending writes by id (ids grow with time, so sorted ids are the writes' order), and where each
    /// writes: a location's writes are found without visiting every pending one (a client writing faster
    /// than its acknowledgements arrive holds hundreds).
    private var writes: [Int64: PendingWrite] = [:]
    private var writeIndex = PathTrie<Int64>()
    private var views: [QuerySpec: ViewState] = [:]
    private var defaultViews = PathTrie<QuerySpec>()
    private var filteredViews = PathTrie<QuerySpec>()
    private var registrations: [RegistrationID: (spec: QuerySpec, type: ListenEventType)] = [:]
    private var listenUsers: [ListenKey: Set<QuerySpec>] = [:]
    private var tagBySpec: [QuerySpec: Int64] = [:]
    private var specByTag: [Int64: QuerySpec] = [:]
    private var nextTag: Int64 = 1
    /// Windows read from the disk cache for filtered views about to be created.
    private var cachedWindows: [QuerySpec: Node] = [:]

    private struct ViewState: Sendable {
        var view: View
        var registrations: [RegistrationID: ListenEventType] = [:]
        /// Whether the view was complete after the last operation that touched it.
        var wasComplete = false
        /// Filtered views only: the server's window, whether its listen completed, and the visible tree.
        var serverWindow: Node = .empty
        var listenComplete = false
        var tree = DatabaseTree()
        /// Default views whose listeners want only `value`: the value they last saw, compared instead of
        /// computing child events nobody asked for (a 10,000-child first load computed 10,000 of them).
        var lastValue: Node?

        var wantsChildEvents: Bool {
            registrations.values.contains { $0 != .value && $0 != .none }
        }
    }

    // MARK: Listeners

    /// Adds a listener; returns its initial events (child events for what is known, `value` when
    /// complete) and the listen to start when the view is new.
    mutating func addRegistration(_ id: RegistrationID, spec: QuerySpec, type: ListenEventType) -> SyncOutput {
        var output = SyncOutput()
        if views[spec] == nil { createView(spec, output: &output) }
        views[spec]!.registrations[id] = type
        registrations[id] = (spec, type)
        let state = views[spec]!
        let tree = spec.isDefault ? eventTree : state.tree
        var events: [Event]
        if type == .value || type == .none {
            events = [Event(type: .value, node: state.view.value(in: tree))]
        } else {
            events = state.view.initialEvents(tree: tree)
        }
        if !isComplete(spec) { events.removeAll { $0.type == .value } }
        if spec.isDefault && !state.wantsChildEvents { views[spec]!.lastValue = eventTree.value(at: spec.path) }
        output.events += Self.raised(events, for: [id: type], spec: spec)
        return output
    }

    /// Removes a listener; returns the listen to stop when it was its view's last.
    mutating func removeRegistration(_ id: RegistrationID) -> SyncOutput {
        guard let (spec, _) = registrations.removeValue(forKey: id) else { return SyncOutput() }
        views[spec]?.registrations[id] = nil
        var output = SyncOutput()
        if views[spec]?.registrations.isEmpty == true { removeView(spec, output: &output) }
        return output
    }

    var registrationIDs: Dictionary<RegistrationID, (spec: QuerySpec, type: ListenEventType)>.Keys { registrations.keys }

    func spec(of registration: RegistrationID) -> QuerySpec? { registrations[registration]?.spec }

    private mutating func createView(_ spec: QuerySpec, output: inout SyncOutput) {
        let key: ListenKey
        if spec.isDefault {
            views[spec] = ViewState(view: View(path: spec.path, params: spec.query.params, tree: eventTree))
            defaultViews.insert(spec, at: spec.path)
            key = ListenKey(path: spec.path, tag: nil)
        } else {
            let tag = nextTag
            nextTag += 1
            tagBySpec[spec] = tag
            specByTag[tag] = spec
            var state = ViewState(view: View(path: spec.path, params: spec.query.params, tree: DatabaseTree()))
            // From the disk cache, or covered by a complete default listen: served from that until its
            // own data comes.
            if let cached = cachedWindows.removeValue(forKey: spec) {
                state.serverWindow = cached
                state.listenComplete = true
            } else if isServerComplete(spec.path) {
                state.serverWindow = QueryWindow.node(of: serverTree.value(at: spec.path), params: spec.query.params)
                state.listenComplete = true
            }
            var tree = DatabaseTree()
            _ = Self.put(&tree, spec.path, overlay(state.serverWindow, at: spec.path))
            state.tree = tree
            state.view = View(path: spec.path, params: spec.query.params, tree: tree)
            views[spec] = state
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
        } else {
            filteredViews.remove(at: spec.path) { $0 == spec }
            if let tag = tagBySpec.removeValue(forKey: spec) { specByTag[tag] = nil }
        }
        listenUsers[key]?.remove(spec)
        if listenUsers[key]?.isEmpty == true {
            listenUsers[key] = nil
            output.listens.append(.stop(key, spec.isDefault ? nil : spec.query))
            if spec.isDefault { setComplete(spec.path, false) }
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

    /// The hash of the data cached for a listen (`h`), `""` when there is none (§2.4).
    func listenHash(_ key: ListenKey) -> String {
        if let tag = key.tag {
            guard let spec = specByTag[tag], let state = views[spec], state.listenComplete else { return "" }
            return state.serverWindow.hash
        }
        guard isServerComplete(key.path) else { return "" }
        return serverTree.value(at: key.path).hash
    }

    // MARK: Server data

    /// A `d` push: `node` replaces what is at `path` (for the tagged query, inside its window).
    mutating func applyServerOverwrite(at path: Path, _ node: Node, tag: Int64?) -> SyncOutput {
        if let tag {
            guard let spec = specByTag[tag], var state = views[spec] else { return SyncOutput() }
            if let inside = path.relative(to: spec.path) { state.serverWindow.set(inside, to: node) }
            views[spec] = state
            return refreshFiltered(spec)
        }
        _ = Self.put(&serverTree, path, node)
        return refreshVisible(at: [path])
    }

    /// An `m` push: each relative path's node replaces what is there.
    mutating func applyServerMerge(at path: Path, _ children: [(Path, Node)], tag: Int64?) -> SyncOutput {
        if let tag {
            guard let spec = specByTag[tag], var state = views[spec] else { return SyncOutput() }
            for (child, node) in children {
                if let inside = path.appending(path: child).relative(to: spec.path) { state.serverWindow.set(inside, to: node) }
            }
            views[spec] = state
            return refreshFiltered(spec)
        }
        var locations: [Path] = []
        for (child, node) in children {
            let location = path.appending(path: child)
            _ = Self.put(&serverTree, location, node)
            locations.append(location)
        }
        return refreshVisible(at: locations)
    }

    /// The listen's `ok`: its cache is complete (docs/protocol.md §2.4), so its views raise `value`.
    mutating func listenComplete(_ key: ListenKey) -> SyncOutput {
        if let tag = key.tag {
            guard let spec = specByTag[tag], views[spec] != nil else { return SyncOutput() }
            views[spec]!.listenComplete = true
            return settle([spec], events: [:])
        }
        guard listenUsers[key] != nil else { return SyncOutput() }
        setComplete(key.path, true)
        let affected = defaultViews.valuesOverlapping(key.path).filter { key.path.contains($0.path) }
        return settle(affected, events: [:])
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
        _ = Self.put(&serverTree, spec.path, node)
        setComplete(spec.path, true)
        return refreshVisible(at: [spec.path])
    }

    // MARK: Local writes

    /// A local set, visible at once unless `visible` is false (a transaction without local events).
    mutating func applyUserWrite(_ write: PendingWrite) -> SyncOutput {
        insert(write)
        guard write.visible else { return SyncOutput() }
        // The visible tree already holds every earlier write: this one goes on top, without
        // recomputing the location from the server's data and all pending writes.
        return refreshVisible(at: write.locations, applying: write)
    }

    /// The server answered write `id`: it leaves the pending writes; a refused one (`revert`) is undone
    /// with the events that takes. An accepted one's data stays visible: where no complete listen
    /// covers it, it becomes the cached server data (the server would have sent it otherwise).
    mutating func ackWrite(_ id: Int64, revert: Bool) -> SyncOutput {
        guard let write = remove(id) else { return SyncOutput() }
        if !revert {
            for location in write.locations where !isServerComplete(location) {
                let value = write.apply(to: serverTree.value(at: location), at: location)
                _ = Self.put(&serverTree, location, value)
            }
        }
        return refreshVisible(at: write.locations)
    }

    /// Replaces a pending write's data (a transaction rerun), keeping its place in the order.
    mutating func replaceWrite(_ write: PendingWrite) -> SyncOutput {
        guard let old = remove(write.id) else { return applyUserWrite(write) }
        insert(write)
        return refreshVisible(at: old.locations + write.locations)
    }

    /// Every pending write undone (`purgeOutstandingWrites`, or the client's own aborts).
    mutating func removeAllWrites() -> SyncOutput {
        let locations = writes.values.flatMap(\.locations)
        writes = [:]
        writeIndex = PathTrie()
        return refreshVisible(at: locations)
    }

    private mutating func insert(_ write: PendingWrite) {
        writes[write.id] = write
        for location in write.locations { writeIndex.insert(write.id, at: location) }
    }

    private mutating func remove(_ id: Int64) -> PendingWrite? {
        guard let write = writes.removeValue(forKey: id) else { return nil }
        for location in write.locations { writeIndex.remove(at: location) { $0 == id } }
        return write
    }

    /// The pending writes at, above or below `path`, oldest first.
    private func writes(overlapping path: Path) -> [PendingWrite] {
        guard !writes.isEmpty else { return [] }
        return Set(writeIndex.valuesOverlapping(path)).sorted().compactMap { writes[$0] }
    }

    // MARK: Reading

    /// What is visible at `path`: the server's data with the pending writes over it, excluding those in
    /// `excluding` (a transaction computes from the state without its own write).
    func visibleValue(at path: Path, excluding: Set<Int64> = []) -> Node {
        var node = serverTree.value(at: path)
        for write in writes(overlapping: path) where write.visible && !excluding.contains(write.id) {
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

    /// Replaces the node at `path`: server data and local writes are already checked (and `.info` keys,
    /// which the client sets itself, would not pass a key check).
    @discardableResult
    private static func put(_ tree: inout DatabaseTree, _ path: Path, _ value: Node) -> ChangeSet {
        ChangeSet([tree.apply(validated: ChangeSet.Change(path: path, old: .empty, new: value))])
    }

    // MARK: Completeness

    private mutating func setComplete(_ path: Path, _ complete: Bool) {
        if complete {
            guard completeLocations.insert(path).inserted else { return }
            completeIndex.insert(path, at: path)
        } else if completeLocations.remove(path) != nil {
            completeIndex.remove(at: path) { $0 == path }
        }
    }

    private func isServerComplete(_ path: Path) -> Bool {
        !completeIndex.valuesAtOrAbove(path).isEmpty
    }

    private func coveredByPendingSet(_ path: Path) -> Bool {
        guard !writes.isEmpty else { return false }
        return Set(writeIndex.valuesAtOrAbove(path)).contains { id in
            guard let write = writes[id] else { return false }
            guard write.visible, case .set(let written, _) = write.kind else { return false }
            return written.last != .priorityKey && written.contains(path)
        }
    }

    private func isComplete(_ spec: QuerySpec) -> Bool {
        if coveredByPendingSet(spec.path) { return true }
        if spec.isDefault { return isServerComplete(spec.path) }
        return views[spec]?.listenComplete ?? false
    }

    // MARK: Events

    /// Brings the visible trees up to date at `locations` (default views from the server cache and the
    /// pending writes; filtered views from their windows) and raises the events that took.
    private mutating func refreshVisible(at written: [Path], applying newest: PendingWrite? = nil) -> SyncOutput {
        // A priority write changes its node: refresh the node.
        let locations = written.map { $0.last == .priorityKey ? ($0.parent ?? $0) : $0 }
        var changes = ChangeSet()
        for location in locations {
            let value = newest.map { $0.apply(to: eventTree.value(at: location), at: location) } ?? visibleValue(at: location)
            changes.changes += Self.put(&eventTree, location, value).changes
        }
        var affected: [QuerySpec] = []
        var seen = Set<QuerySpec>()
        for location in locations {
            for spec in defaultViews.valuesOverlapping(location) where seen.insert(spec).inserted { affected.append(spec) }
        }
        var events: [QuerySpec: [Event]] = [:]
        for spec in affected {
            guard let state = views[spec] else { continue }
            if state.wantsChildEvents {
                views[spec]!.lastValue = nil
                events[spec] = views[spec]!.view.apply(changes, tree: eventTree)
            } else {
                let new = eventTree.value(at: spec.path)
                if let old = state.lastValue, Self.isSame(old, new) { continue }
                views[spec]!.lastValue = new
                events[spec] = [Event(type: .value, node: new)]
            }
        }
        var output = settle(affected, events: events)
        var filtered: [QuerySpec] = []
        seen = []
        for location in locations {
            for spec in filteredViews.valuesOverlapping(location) where seen.insert(spec).inserted { filtered.append(spec) }
        }
        for spec in filtered { output.append(refreshFiltered(spec)) }
        return output
    }

    /// Recomputes a filtered view's visible tree from its window and the pending writes.
    private mutating func refreshFiltered(_ spec: QuerySpec) -> SyncOutput {
        guard var state = views[spec] else { return SyncOutput() }
        let value = overlay(state.serverWindow, at: spec.path)
        var events: [Event] = []
        let changes = Self.put(&state.tree, spec.path, value)
        events = state.view.apply(changes, tree: state.tree)
        views[spec] = state
        return settle([spec], events: [spec: events])
    }

    private func overlay(_ base: Node, at location: Path) -> Node {
        var node = base
        for write in writes(overlapping: location) where write.visible { node = write.apply(to: node, at: location) }
        return node
    }

    /// Equal nodes, children maps compared by identity first (a location rewritten with the same data
    /// shares nothing, but an unchanged one is the same map).
    private static func isSame(_ a: Node, _ b: Node) -> Bool {
        if a.hasChildren && b.hasChildren && a.priority == b.priority && a.children.isIdentical(to: b.children) { return true }
        return a == b
    }

    /// Turns views' events into listeners' events: `value` only while complete, and once when a view
    /// becomes complete without its data changing.
    private mutating func settle(_ specs: [QuerySpec], events: [QuerySpec: [Event]]) -> SyncOutput {
        var output = SyncOutput()
        for spec in specs {
            guard var state = views[spec] else { continue }
            var viewEvents = events[spec] ?? []
            let complete = isComplete(spec)
            if !complete {
                viewEvents.removeAll { $0.type == .value }
            } else if !state.wasComplete && !viewEvents.contains(where: { $0.type == .value }) {
                let tree = spec.isDefault ? eventTree : state.tree
                viewEvents.append(Event(type: .value, node: state.view.value(in: tree)))
            }
            state.wasComplete = complete
            views[spec] = state
            output.events += Self.raised(viewEvents, for: state.registrations, spec: spec)
        }
        return output
    }

    private static func raised(
        _ events: [Event], for registrations: [RegistrationID: ListenEventType], spec: QuerySpec
    ) -> [RaisedEvent] {
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
}
