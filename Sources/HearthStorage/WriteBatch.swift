public import HearthCore

/// One acknowledged write (a set, a priority write or a multi-path update) as storage operations that
/// must be applied atomically, in order.
///
/// Engines store one record per leaf plus one marker per prioritized inner node, keyed by path (see
/// docs/storage.md). A batch says exactly which records go and which come, so an engine never reads
/// before it writes:
///
///     let before = tree.root
///     let changes = try tree.set("users/ada/name", to: Node("Ada"))
///     let batch = WriteBatch(changes: changes, before: before, after: tree.root)
///     // [.put(users/ada/name, "Ada")]: nothing was there, no ancestor was a leaf or prioritized
public struct WriteBatch: Sendable, Equatable {
    public enum Operation: Sendable, Equatable {
        /// Remove the record at this path and every record below it.
        case removeSubtree(Path)
        /// Remove only the record at this path (a leaf, or an inner node's priority marker).
        case removeRecord(Path)
        /// Write the records of this node at this path; nothing is stored at or below it beforehand.
        case put(Path, Node)
        /// Mark the inner node at this path with a priority (replacing any marker there).
        case putPriority(Path, Priority)

        /// The path the operation is at.
        public var path: Path {
            switch self {
            case .removeSubtree(let path), .removeRecord(let path), .put(let path, _), .putPriority(let path, _): return path
            }
        }

        /// True when the operation removes or rewrites the record at `target` (an inner node's
        /// priority marker, there).
        func replacesMarker(at target: Path) -> Bool {
            switch self {
            case .removeRecord(let path), .putPriority(let path, _): return path == target
            case .removeSubtree(let path), .put(let path, _): return path.contains(target)
            }
        }
    }

    public var operations: [Operation]
    /// Ledger entries this write carries out (``LedgerEntry``): an engine that keeps the ledger removes
    /// them in the same transaction as the operations; others ignore them. Not part of the stored change.
    public var carriesOut: [LedgerEntry] = []
    /// The write's change-feed entry (docs/feed.md): an engine that keeps the feed stores it in the same
    /// transaction as the operations; others ignore it. Nil for writes the feed does not record (imports,
    /// the server's own bookkeeping).
    public var feed: ChangeFeedEntry?
    /// The ID its client gave the write (HearthClient's `wid`): an engine that remembers applied writes
    /// records it in the same transaction as the operations (``StorageEngine/rememberedWriteIDs()``);
    /// others ignore it. Not part of the stored change.
    public var writeID: String?

    public init(operations: [Operation]) { self.operations = operations }

    /// The operations that turn the stored records of `before` into those of `after`, given the
    /// change set of the write between them.
    ///
    /// Holding `before` while the write runs makes the tree share its nodes, so the write copies every
    /// node on its path (copy-on-write). Writers that care take an ``AncestorRecords`` snapshot before the
    /// write instead and use ``init(changes:ancestorsBefore:after:)``.
    public init(changes: ChangeSet, before: Node, after: Node) {
        self.init(
            changes: changes, ancestorsBefore: AncestorRecords(of: changes.changes.map(\.path), in: before), after: after)
    }

    /// What storage holds for the ancestors of some paths: which of them have a record (a leaf, or an
    /// inner node's priority marker). Taken before a write, from the tree the write is applied to, it is
    /// all ``WriteBatch`` needs of the old tree; most ancestors have no record, so it is usually empty.
    public struct AncestorRecords: Sendable {
        /// Ancestors with a record, and their priority when they are inner nodes with one.
        var records: [(path: Path, marker: Priority?)] = []

        /// The records of every proper ancestor (the root included) of each of `paths` in `root`.
        public init(of paths: [Path], in root: Node) {
            for path in paths { add(path, in: root) }
        }

        /// The records of every proper ancestor of `path` in `root`.
        public init(of path: Path, in root: Node) { add(path, in: root) }

        private mutating func add(_ path: Path, in root: Node) {
            var node = root
            // Ancestor paths are built only for the (rare) ancestors with a record.
            let keys = path.keys
            for depth in keys.indices {
                if node.isEmpty { break }  // nothing stored below here
                if node.isLeaf || node.priority != nil {
                    let ancestor = Path(Array(keys[..<depth]))
                    if !records.contains(where: { $0.path == ancestor }) {
                        records.append((ancestor, node.hasChildren ? node.priority : nil))
                    }
                }
                // The node at `path` itself is not an ancestor: no lookup of the last key.
                if depth + 1 < keys.count { node = node.child(keys[depth]) }
            }
        }

        func record(at path: Path) -> (hasRecord: Bool, marker: Priority?) {
            for record in records where record.path == path { return (true, record.marker) }
            return (false, nil)
        }
    }

    /// The operations that turn the stored records before a write into those of `after`, given the
    /// write's change set and the ancestor records taken before it.
    ///
    /// Per change: ancestors that were leaves or carried a priority lose their record; the old subtree
    /// goes, the new one comes; ancestors that are prioritized inner nodes afterwards get their marker
    /// back. Untouched ancestors cost one lookup in memory and nothing in storage.
    public init(changes: ChangeSet, ancestorsBefore: AncestorRecords, after: Node) {
        if ancestorsBefore.records.isEmpty {
            // No ancestor had a record, so none has one now: a write below an inner node without a
            // priority leaves that node's priority alone, and ancestors it creates have none. Only the
            // written subtrees change (the common case: no walk of `after`).
            var removals: [Operation] = []
            var puts: [Operation] = []
            for change in changes.changes {
                if !change.old.isEmpty { removals.append(.removeSubtree(change.path)) }
                if !change.new.isEmpty { puts.append(.put(change.path, change.new)) }
            }
            operations = removals.isEmpty ? puts : removals + puts
            return
        }
        var removals: [Operation] = []
        var puts: [Operation] = []
        var markers: [Operation] = []
        // Ancestors shared by several changes (a multi-path update) are handled once.
        var seenAncestors: Set<Path> = []
        let dedupe = changes.changes.count > 1
        for change in changes.changes {
            // Ancestors, root first. Even a write that changes nothing at its path can empty a leaf
            // ancestor (removing below a leaf), so every change is walked.
            var newNode = after
            var ancestor = Path.root
            for key in change.path.keys {
                if !dedupe || seenAncestors.insert(ancestor).inserted {
                    let old = ancestorsBefore.record(at: ancestor)
                    let newMarker = newNode.hasChildren ? newNode.priority : nil
                    // A leaf that is still a leaf afterwards (a removal below it changes nothing: `Node.set`
                    // keeps the leaf) keeps its record.
                    let leafStays = old.marker == nil && newNode.isLeaf
                    if old.hasRecord && !leafStays && !(old.marker != nil && old.marker == newMarker) {
                        removals.append(.removeRecord(ancestor))
                        if let newMarker { markers.append(.putPriority(ancestor, newMarker)) }
                    } else if let newMarker, old.marker != newMarker {
                        markers.append(.putPriority(ancestor, newMarker))
                    }
                }
                newNode = newNode.child(key)
                ancestor = ancestor.appending(key)
            }
            if !change.old.isEmpty { removals.append(.removeSubtree(change.path)) }
            if !change.new.isEmpty { puts.append(.put(change.path, change.new)) }
        }
        operations = removals + puts + markers
    }

    /// The batch without its change-feed entry (for keeping it once the entry is stored).
    public var withoutFeed: WriteBatch {
        var batch = self
        batch.feed = nil
        return batch
    }

    /// True when the batch changes nothing.
    public var isEmpty: Bool { operations.isEmpty }

    /// Rough payload size in bytes (JSON size of what is put), for write-amplification reports.
    public var payloadByteCount: Int {
        var total = 0
        for operation in operations {
            if case .put(let path, let node) = operation {
                var bytes: [UInt8] = []
                node.appendJSON(to: &bytes, format: .export)
                total += bytes.count + path.description.utf8.count
            }
        }
        return total
    }
}

extension Node {
    /// This tree with `batch` applied, the way an engine applies it to its records.
    ///
    /// Records keep an inner node's priority in a marker of its own, which a removal below the node does
    /// not touch; a tree drops a node, priority and all, when its last child goes, even when the batch's
    /// next operation puts a child back (`set n/c` on `{".priority": 5, "c": 1}` is a removal and a put).
    /// So the priorities of the inner nodes above the batch's paths are noted first and given back to
    /// those that have children again, unless an operation removed or replaced their marker.
    public func applying(_ batch: WriteBatch) -> Node {
        var root = self
        var markers: [(path: Path, priority: Priority)] = []
        for operation in batch.operations {
            var ancestor = Path.root
            var node = root
            for key in operation.path.keys {
                if node.hasChildren, let priority = node.priority, !markers.contains(where: { $0.path == ancestor }) {
                    markers.append((ancestor, priority))
                }
                node = node.child(key)
                if node.isEmpty { break }
                ancestor = ancestor.appending(key)
            }
        }
        for operation in batch.operations {
            switch operation {
            case .removeSubtree(let path):
                root.set(path, to: .empty)
            case .removeRecord(let path):
                let node = root.child(at: path)
                if node.isLeaf {
                    root.set(path, to: .empty)
                } else if node.priority != nil {
                    root.set(path, to: node.withPriority(nil))
                }
            case .put(let path, let node):
                root.set(path, to: node)
            case .putPriority(let path, let priority):
                let node = root.child(at: path)
                if node.hasChildren { root.set(path, to: node.withPriority(priority)) }
            }
        }
        for marker in markers where !batch.operations.contains(where: { $0.replacesMarker(at: marker.path) }) {
            let node = root.child(at: marker.path)
            if node.hasChildren && node.priority != marker.priority {
                root.set(marker.path, to: node.withPriority(marker.priority))
            }
        }
        return root
    }
}
