import HearthCore

/// A node of the tree as rules see it: a stored `Node`, or a node of the post-write tree that is
/// built lazily as "this old node with these children replaced".
///
/// Materializing the merged tree (`Node.setting`) copies every B-tree node on the written path,
/// which for wide levels costs more than all the rules together (docs/rules.md, rules.write).
/// Rules only ask nodes on that path small questions (exists, has children, a child), so the
/// overlay answers them from the old node and the replacements, with `Node.set`'s semantics:
/// empty replacements delete, a level left without children is empty, a leaf gains children
/// only when a non-empty value lands below it, and priorities stay.
enum TreeView: Sendable {
    case node(Node)
    case overlay(TreeOverlay)

    /// The post-write view of `base` after replacing the node at each relative path. Paths must
    /// not overlap (one containing another).
    static func applying(_ writes: [(keys: ArraySlice<ChildKey>, value: Node)], to base: Node) -> TreeView {
        if let whole = writes.first(where: { $0.keys.isEmpty }) { return .node(whole.value) }
        var groups: [(key: ChildKey, writes: [(keys: ArraySlice<ChildKey>, value: Node)])] = []
        for write in writes {
            let key = write.keys.first!
            let rest = (keys: write.keys.dropFirst(), value: write.value)
            if let index = groups.firstIndex(where: { $0.key == key }) {
                groups[index].writes.append(rest)
            } else {
                groups.append((key, [rest]))
            }
        }
        let overrides = groups.map { (key: $0.key, view: applying($0.writes, to: base.child($0.key))) }
        return .overlay(TreeOverlay(base: base, overrides: overrides))
    }

    /// The view after replacing the one node at `keys` below `base`: the common case, built
    /// without the grouping of `applying`.
    static func replacing(_ keys: ArraySlice<ChildKey>, with value: Node, in base: Node) -> TreeView {
        guard let key = keys.first else { return .node(value) }
        let child = replacing(keys.dropFirst(), with: value, in: base.child(key))
        return .overlay(TreeOverlay(base: base, overrides: [(key, child)]))
    }

    func child(_ key: ChildKey) -> TreeView {
        switch self {
        case .node(let node): return .node(node.child(key))
        case .overlay(let overlay):
            for entry in overlay.overrides where entry.key == key { return entry.view }
            return .node(overlay.base.child(key))
        }
    }

    func descend<Keys: Sequence<ChildKey>>(_ keys: Keys) -> TreeView {
        var view = self
        for key in keys {
            view = view.child(key)
            if case .node(let node) = view, node.isEmpty { return view }
        }
        return view
    }

    var hasChildren: Bool {
        switch self {
        case .node(let node): return node.hasChildren
        case .overlay(let overlay): return overlay.hasChildren
        }
    }

    var isEmpty: Bool {
        switch self {
        case .node(let node): return node.isEmpty
        case .overlay(let overlay): return !overlay.hasChildren && !overlay.base.isLeaf
        }
    }

    /// The leaf the view holds, if it is one: an overlay keeps its old leaf only when nothing
    /// non-empty landed below it.
    var leaf: Node? {
        switch self {
        case .node(let node): return node.isLeaf ? node : nil
        case .overlay(let overlay): return overlay.base.isLeaf && !overlay.hasChildren ? overlay.base : nil
        }
    }

    var priority: Priority? {
        switch self {
        case .node(let node): return node.priority
        case .overlay(let overlay): return isEmpty ? nil : overlay.base.priority
        }
    }

    /// `val()`: the leaf's value, null, or an opaque object (never built from an overlay).
    var ruleValue: RuleValue {
        switch self {
        case .node(let node): return RuleValue(node: node)
        case .overlay:
            if let leaf { return RuleValue(node: leaf) }
            return hasChildren ? .opaqueObject : .null
        }
    }

    /// The whole node, built on demand (only for callers that need a real `Node`).
    var materialized: Node {
        switch self {
        case .node(let node): return node
        case .overlay(let overlay):
            var node = overlay.base
            for entry in overlay.overrides { node.setChild(entry.key, to: entry.view.materialized) }
            // One by one, an early deletion can empty the node for a moment and drop its priority;
            // the update is one write, so the node keeps it when it still exists.
            return node.withPriority(priority)
        }
    }
}

/// An old node with some children replaced: as many as the write has keys at this level, usually
/// one, in no particular order.
final class TreeOverlay: Sendable {
    let base: Node
    let overrides: [(key: ChildKey, view: TreeView)]
    let hasChildren: Bool

    init(base: Node, overrides: [(key: ChildKey, view: TreeView)]) {
        self.base = base
        self.overrides = overrides
        if overrides.contains(where: { !$0.view.isEmpty }) {
            hasChildren = true
        } else if !base.hasChildren {
            hasChildren = false
        } else {
            // Only deletions: some old child must survive them.
            let removed = overrides.reduce(0) { $0 + (base.child($1.key).isEmpty ? 0 : 1) }
            hasChildren = base.childCount > removed
        }
    }
}
