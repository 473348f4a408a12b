/// A database's whole tree with its child indexes: the one mutable thing in HearthCore.
///
/// Every write is validated, applied atomically and answered with its `ChangeSet`. Reads are
/// O(depth · log n) and `root` is an O(1) snapshot. The server owns one per namespace on its
/// event-loop thread; nothing here locks.
///
///     var tree = DatabaseTree()
///     let change = try tree.set(Path("jokes/j1/votes"), to: Node(3))
///     tree.value(at: Path("jokes/j1"))   // {"votes": 3}
public struct DatabaseTree: Sendable {
    /// The current tree.
    public private(set) var root: Node
    /// Indexes kept up to date with every write, by location and order.
    public private(set) var indexes: [IndexKey: ChildIndex] = [:]

    public init(root: Node = .empty) { self.root = root }

    /// The node at `path` (the empty node when nothing is there).
    public func value(at path: Path) -> Node { root.child(at: path) }

    /// The index of `path`'s children by `index`, when one is kept.
    public func index(at path: Path, by index: QueryIndex) -> ChildIndex? {
        indexes[IndexKey(path: path, index: index)]
    }

    /// Starts keeping an index of the children at `path` (no-op when already kept, and for the
    /// key index, which is the children map itself).
    public mutating func ensureIndex(at path: Path, by index: QueryIndex) {
        if case .key = index { return }
        let key = IndexKey(path: path, index: index)
        guard indexes[key] == nil else { return }
        indexes[key] = ChildIndex(index: index, of: value(at: path))
    }

    public mutating func dropIndex(at path: Path, by index: QueryIndex) {
        indexes[IndexKey(path: path, index: index)] = nil
    }

    /// The window of a query at `path`, using a kept index when there is one.
    public func window(at path: Path, params: QueryParams) -> [QueryWindow.Entry] {
        QueryWindow.entries(of: value(at: path), params: params, index: index(at: path, by: params.index))
    }

    // MARK: Writes

    /// Replaces the node at `path` (`Node.empty` removes it); a last segment `.priority` sets only
    /// the priority. With `ifHash`, the write happens only when the current node's Firebase hash
    /// (docs/protocol.md §4) equals it; otherwise nothing changes and `DataError.Code.hashMismatch`
    /// is thrown (the wire's `datastale`). Server-value placeholders in `value` are resolved against
    /// the tree before the write with `now` (milliseconds since the epoch). `value` must already be
    /// valid for `path` (the JSON parser with `.write(at:)` checks it).
    @discardableResult
    public mutating func set(_ path: Path, to value: Node, ifHash: String? = nil, now: Int64? = nil) throws(DataError) -> ChangeSet {
        try KeyValidation.validate(writePath: path)
        if let ifHash {
            let current = root.child(at: path)
            guard current.hash == ifHash else {
                throw DataError(.hashMismatch, "Transaction hash does not match")
            }
        }
        let resolved = try resolveServerValues(value, at: path, now: now)
        return ChangeSet([apply(path, resolved)])
    }

    /// `value` with server values resolved against the current tree (docs/protocol.md §5.5).
    func resolveServerValues(_ value: Node, at path: Path, now: Int64?) throws(DataError) -> Node {
        guard ServerValues.containsPlaceholders(value) else { return value }
        guard let now else {
            throw DataError(.invalidServerValue, "The write at '\(path.slashed)' holds server values but no server time was given.")
        }
        return try ServerValues.resolve(value, at: path, in: root, now: now)
    }

    /// Removes the node at `path`.
    @discardableResult
    public mutating func remove(_ path: Path) throws(DataError) -> ChangeSet {
        try set(path, to: .empty)
    }

    /// Writes several locations below `path` as one atomic step (a Firebase multi-path update).
    /// Keys are relative paths; none may contain another. Nothing is written when any is invalid.
    @discardableResult
    public mutating func update(_ path: Path, with values: [(Path, Node)], now: Int64? = nil) throws(DataError) -> ChangeSet {
        var targets: [(Path, Node)] = []
        targets.reserveCapacity(values.count)
        for (relative, value) in values {
            let target = path.appending(path: relative)
            try KeyValidation.validate(writePath: target)
            // Every key resolves against the tree before the merge (§5.5), so resolve all first.
            targets.append((target, try resolveServerValues(value, at: target, now: now)))
        }
        let sorted = targets.map(\.0).sorted()
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.contains(b) {
            throw DataError(
                .overlappingPaths,
                "Path '\(b.slashed)' is an intersecting path of '\(a.slashed)': an update cannot write a location and its descendant.")
        }
        var changes: [ChangeSet.Change] = []
        changes.reserveCapacity(targets.count)
        for (target, value) in targets { changes.append(apply(target, value)) }
        return ChangeSet(changes)
    }

    /// Replaces the node at `path` with `value`, already validated and resolved (a change another tree
    /// accepted: `DatabaseTree.set` or `update` returned it), and keeps the indexes in step. No key
    /// validation, no hash check, no server values: a write's second application, on a tree that
    /// follows the first one (HearthStorage's committed tree).
    public mutating func apply(validated change: ChangeSet.Change) -> ChangeSet.Change {
        apply(change.path, change.new)
    }

    /// Applies one validated write and keeps the indexes in step.
    mutating func apply(_ path: Path, _ value: Node) -> ChangeSet.Change {
        let isPriorityWrite = path.last == .priorityKey
        let nodePath = isPriorityWrite ? path.parent! : path

        // Children of indexed locations whose values this write changes, read before the write.
        var touched: [(key: IndexKey, child: ChildKey, old: Node)] = []
        var rebuild: [IndexKey] = []
        for key in indexes.keys {
            if nodePath.count > key.path.count, key.path.contains(nodePath) {
                let child = nodePath.keys[key.path.count]
                touched.append((key, child, root.child(at: key.path.appending(child))))
            } else if nodePath.contains(key.path) {
                rebuild.append(key)
            }
        }

        let replaced = root.set(path, to: value)

        for (key, child, oldChild) in touched {
            let newChild = root.child(at: key.path.appending(child))
            indexes[key]!.update(key: child, old: oldChild, new: newChild)
        }
        for key in rebuild { indexes[key] = ChildIndex(index: key.index, of: root.child(at: key.path)) }
        if isPriorityWrite {
            let new = root.child(at: nodePath)
            return ChangeSet.Change(path: nodePath, old: new.withPriority(Priority(replaced)), new: new)
        }
        return ChangeSet.Change(path: nodePath, old: replaced, new: value)
    }
}
