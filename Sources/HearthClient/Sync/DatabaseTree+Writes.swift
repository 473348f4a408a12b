import HearthCore

extension DatabaseTree {
    /// Replaces the node at `path` with data already checked (server data, local writes, and `.info`
    /// keys, which the client sets itself and which would not pass a key check).
    @discardableResult
    mutating func put(_ path: Path, _ value: Node) -> ChangeSet.Change {
        apply(validated: ChangeSet.Change(path: path, old: .empty, new: value))
    }
}
