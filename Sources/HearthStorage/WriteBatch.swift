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
    }

    public var operations: [Operation]

    public init(operations: [Operation]) { self.operations = operations }

    /// The operations that turn the stored records of `before` into those of `after`, given the
    /// change set of the write between them.
    ///
    /// Per change: ancestors that were leaves or carried a priority lose their record; the old subtree
    /// goes, the new one comes; ancestors that are prioritized inner nodes afterwards get their marker
    /// back. Untouched ancestors cost one lookup in memory and nothing in storage.
    public init(changes: ChangeSet, before: Node, after: Node) {
        var removals: [Operation] = []
        var puts: [Operation] = []
        var markers: [Operation] = []
        var seenAncestors = Set<Path>()
        for change in changes.changes {
            // Ancestors, root first. Even a write that changes nothing at its path can empty a leaf
            // ancestor (removing below a leaf), so every change is walked.
            var oldNode = before, newNode = after
            var ancestor = Path.root
            for key in change.path.keys {
                if seenAncestors.insert(ancestor).inserted {
                    let oldHasRecord = oldNode.isLeaf || oldNode.priority != nil
                    let newMarker = newNode.hasChildren ? newNode.priority : nil
                    let oldMarker = oldNode.hasChildren ? oldNode.priority : nil
                    if oldHasRecord && !(oldMarker != nil && oldMarker == newMarker) {
                        removals.append(.removeRecord(ancestor))
                        if let newMarker { markers.append(.putPriority(ancestor, newMarker)) }
                    } else if let newMarker, oldMarker != newMarker {
                        markers.append(.putPriority(ancestor, newMarker))
                    }
                }
                oldNode = oldNode.child(key)
                newNode = newNode.child(key)
                ancestor = ancestor.appending(key)
            }
            if !change.old.isEmpty { removals.append(.removeSubtree(change.path)) }
            if !change.new.isEmpty { puts.append(.put(change.path, change.new)) }
        }
        operations = removals + puts + markers
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
    public func applying(_ batch: WriteBatch) -> Node {
        var root = self
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
        return root
    }
}
