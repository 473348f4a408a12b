import HearthCore

/// A `RuleDataSnapshot`: a location in one tree (before or after the write) and the node there.
struct RuleSnapshot: Sendable {
    /// The whole tree the snapshot belongs to, so `parent()` can climb.
    let tree: TreeView
    /// The location's keys: a slice, so the walks hand out prefixes of one path without copying.
    let keys: ArraySlice<ChildKey>
    let node: TreeView

    func child(_ relative: [ChildKey]) -> RuleSnapshot {
        var keys = self.keys
        keys.append(contentsOf: relative)
        return RuleSnapshot(tree: tree, keys: keys, node: node.descend(relative))
    }

    func parent() -> RuleSnapshot? {
        guard !keys.isEmpty else { return nil }
        let parentKeys = keys.dropLast()
        return RuleSnapshot(tree: tree, keys: parentKeys, node: tree.descend(parentKeys))
    }

    /// The keys of a relative path as `child()` reads it: split on `/`, empty segments dropped.
    static func keys(of relative: String) -> [ChildKey] {
        relative.split(separator: "/", omittingEmptySubsequences: true).map { ChildKey(String($0)) }
    }
}
