/// What one write changed: for each location written, the node before and after.
///
/// A set produces one change; an update produces one per written key, all from one atomic step.
/// Event generation reads only this and the new tree, so listeners never rescan untouched data.
public struct ChangeSet: Sendable {
    public struct Change: Sendable, Equatable {
        /// The location whose node was replaced (for a `.priority` write, the node's own path).
        public var path: Path
        public var old: Node
        public var new: Node

        public init(path: Path, old: Node, new: Node) {
            self.path = path
            self.old = old
            self.new = new
        }
    }

    public var changes: [Change]

    public init(_ changes: [Change] = []) { self.changes = changes }

    /// True when nothing changed (every write stored what was already there).
    public var isEmpty: Bool { changes.allSatisfy { $0.old == $0.new } }

    /// True when some change can affect what is at `path`.
    public func touches(_ path: Path) -> Bool { changes.contains { $0.path.overlaps(path) } }
}
