import HearthCore

extension DatabaseTree {
    /// Replaces the node at `path` with data already checked (server data, local writes, and `.info`
    /// keys, which the client sets itself and which would not pass a key check).
    @discardableResult
    mutating func put(_ path: Path, _ value: Node) -> ChangeSet.Change {
        apply(validated: ChangeSet.Change(path: path, old: .empty, new: value))
    }

    /// Replaces the node at `path` like ``put(_:_:)``, and reports the change where a ``View`` can read
    /// what was there before. A view rebuilds a child's old node by putting each change's old node back
    /// into the new one, which loses what a write changed above its own location. Two writes do:
    ///
    /// - one below a leaf replaces the leaf (`a/b` = 1, then a write at `a/b/c`): the change is reported
    ///   at the leaf, old node 1, so a view of `a` sees `b` changed rather than added;
    /// - a removal that empties its ancestors removes them, priorities and all: the change is reported
    ///   at the highest one emptied, so the removal carries its old node whole.
    mutating func replace(_ path: Path, with value: Node) -> ChangeSet.Change {
        guard path.last != .priorityKey, let reshaped = reshapedAncestor(of: path, removing: value.isEmpty) else {
            return put(path, value)
        }
        put(path, value)
        return ChangeSet.Change(path: reshaped.path, old: reshaped.old, new: root.child(at: reshaped.path))
    }

    /// The highest ancestor of `path` whose node a write at `path` changes beyond the written location,
    /// with its node before the write; nil when there is none (the common case).
    private func reshapedAncestor(of path: Path, removing: Bool) -> (path: Path, old: Node)? {
        // Nodes are looked up down the path and let go of before the write: a node held across it would
        // make the write copy what it could change in place.
        var node = root
        var chainTop: Int?  // the depth from which every ancestor has the path's next key as its only child
        for depth in 0..<path.count {
            if node.isLeaf {
                return removing ? nil : (Path(Array(path.keys.prefix(depth))), node)  // a removal leaves a leaf as it is
            }
            if node.childCount == 1 {
                chainTop = chainTop ?? depth
            } else {
                chainTop = nil
            }
            node = node.child(path.keys[depth])
            if node.isEmpty { return nil }  // nothing below to reshape: the write only adds
        }
        guard removing, let chainTop else { return nil }
        let top = Path(Array(path.keys.prefix(chainTop)))
        return (top, root.child(at: top))
    }
}
