import HearthCore

/// A write's shape as its client sent it: an overwrite at one path, or a merge of keys under one path.
/// Fan-out reads from it which locations a committed write can have changed.
enum Write: Equatable, CustomStringConvertible {
    case set(Path)
    case update(Path, [Path])

    /// The locations the write replaces (a `.priority` write replaces its node); a merge with no keys,
    /// the location it was sent to.
    var locations: [Path] {
        switch self {
        case .set(let path): return [Self.normalized(path)]
        case .update(let path, let keys):
            return keys.isEmpty ? [path] : keys.map { Self.normalized(path.appending(path: $0)) }
        }
    }

    /// Whether the write may change what is at `location` or below it.
    func touches(_ location: Path) -> Bool {
        switch self {
        case .set(let path): return Self.normalized(path).overlaps(location)
        case .update(let path, let keys): return keys.contains { Self.normalized(path.appending(path: $0)).overlaps(location) }
        }
    }

    /// False only where a listen at `location` surely gets nothing: the write is neither above, at nor
    /// below it (a merge at or under `location` always reaches it, even with no keys).
    func mayReach(_ location: Path) -> Bool {
        if case .update(let path, _) = self, location.contains(path) { return true }
        return touches(location)
    }

    /// A `.priority` write changes its node.
    static func normalized(_ path: Path) -> Path {
        path.last == .priorityKey ? (path.parent ?? path) : path
    }

    var description: String {
        switch self {
        case .set(let path): return "set \(path.slashed)"
        case .update(let path, let keys): return "update \(path.slashed) \(keys.map(\.description))"
        }
    }
}

/// A write once it is durable: its shape, the tree after it and what it changed (each changed
/// location's old and new value). Everything fan-out needs, and all of it immutable.
struct CommittedChange {
    let write: Write
    let root: Node
    let changes: ChangeSet

    /// Whether the write changed what is at `location` (a write above it may have left it as it was).
    func changed(_ location: Path) -> Bool {
        for change in changes.changes {
            guard let relative = location.relative(to: change.path) else { continue }
            if change.old.child(at: relative) != change.new.child(at: relative) { return true }
        }
        return false
    }
}
