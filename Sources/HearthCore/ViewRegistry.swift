/// Every view of one database, found by location: a write reaches exactly the views at, above or
/// below the locations it changed, without visiting the others.
///
/// Listeners are named by `ListenerID`s the owner hands out (the server maps a connection and
/// tag to one, the client a callback handle). The registry is not generic on purpose: generic code
/// called from another module runs unspecialized, and this is the hottest path of a write.
///
/// A class, not a value: its trie nodes are shared mutable objects, so a copy could never be
/// independent. Its owner confines it to one thread or actor (the server's event loop).
public final class ViewRegistry: @unchecked Sendable {
    public typealias ID = ListenerID

    /// One level of the location trie.
    final class TrieNode: @unchecked Sendable {
        // Sendable: owned by one registry, which its owner confines to one thread or actor.
        /// The views at this location: usually one or two, so an array (updated in place by
        /// index) beats a dictionary, whose value access copied each view out and back.
        var views: [(id: ID, view: View)] = []
        var children: [ChildKey: TrieNode] = [:]
        /// The `apply` pass that last updated this node's views, so a change set with several
        /// changes on one path updates each view once (cheaper than a visited set per pass).
        var lastPass: UInt64 = 0
        var isEmpty: Bool { views.isEmpty && children.isEmpty }
    }

    private var root = TrieNode()
    private var pass: UInt64 = 0
    private var locations: [ID: Path] = [:]

    public init() {}

    public var count: Int { locations.count }

    /// Adds (or replaces) a listener's view and returns its initial events.
    @discardableResult
    public func add(_ id: ID, path: Path, params: QueryParams = .all, tree: DatabaseTree) -> [Event] {
        remove(id)
        var node = root
        for key in path.keys {
            if let next = node.children[key] {
                node = next
            } else {
                let next = TrieNode()
                node.children[key] = next
                node = next
            }
        }
        let view = View(path: path, params: params, tree: tree)
        node.views.append((id, view))
        locations[id] = path
        return view.initialEvents(tree: tree)
    }

    /// Removes a listener's view; unknown IDs are ignored.
    public func remove(_ id: ID) {
        guard let path = locations.removeValue(forKey: id) else { return }
        var trail: [TrieNode] = [root]
        for key in path.keys { trail.append(trail.last!.children[key]!) }
        trail.last!.views.removeAll { $0.id == id }
        for depth in stride(from: path.count, to: 0, by: -1) where trail[depth].isEmpty {
            trail[depth - 1].children[path.keys[depth - 1]] = nil
        }
    }

    public func view(_ id: ID) -> View? {
        guard let path = locations[id] else { return nil }
        var node = root
        for key in path.keys { node = node.children[key]! }
        return node.views.first { $0.id == id }?.view
    }

    /// The events every affected listener receives for `changes` (already applied to `tree`).
    public func apply(_ changes: ChangeSet, tree: DatabaseTree) -> [(id: ID, events: [Event])] {
        var result: [(id: ID, events: [Event])] = []
        pass &+= 1
        let pass = self.pass
        func update(_ node: TrieNode) {
            guard node.lastPass != pass, !node.views.isEmpty else { return }
            node.lastPass = pass
            for index in node.views.indices {
                let events = node.views[index].view.apply(changes, tree: tree)
                if !events.isEmpty { result.append((node.views[index].id, events)) }
            }
        }
        func updateSubtree(_ node: TrieNode) {
            update(node)
            for child in node.children.values { updateSubtree(child) }
        }
        for change in changes.changes {
            var node = root
            var reached = true
            for key in change.path.keys {
                update(node)
                guard let next = node.children[key] else {
                    reached = false
                    break
                }
                node = next
            }
            if reached { updateSubtree(node) }
        }
        return result
    }
}

/// Names one listener in a `ViewRegistry`.
public struct ListenerID: Hashable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public var rawValue: UInt64

    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt64) { self.rawValue = value }

    public var description: String { "listener \(rawValue)" }
}
