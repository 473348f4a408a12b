import HearthCore

/// A write made here and not yet acknowledged by the server.
struct PendingWrite: Sendable {
    enum Kind: Sendable {
        case set(Path, Node)
        case merge(Path, [(Path, Node)])
    }

    var id: Int64
    /// Server values already resolved (what local events show).
    var kind: Kind
    /// False for a transaction run without local events.
    var visible: Bool

    /// Every location the write replaces, with the node it puts there.
    var placements: [(location: Path, node: Node)] {
        switch kind {
        case .set(let path, let value): [(path, value)]
        case .merge(let path, let children): children.map { (path.appending(path: $0.0), $0.1) }
        }
    }

    /// Every location the write replaces.
    var locations: [Path] { placements.map(\.location) }

    /// Whether the write can change what is at `location` (or below it).
    func touches(_ location: Path) -> Bool {
        switch kind {
        case .set(let path, _): return path.overlaps(location)
        case .merge(let path, let children):
            return path.overlaps(location) && children.contains { path.appending(path: $0.0).overlaps(location) }
        }
    }

    /// Whether the write replaces the whole node at `location` (a set, or a merge's key, at or above it):
    /// its ``apply(to:at:)`` there does not depend on the base.
    func covers(_ location: Path) -> Bool {
        switch kind {
        case .set(let path, _): return path.contains(location)
        case .merge(let path, let children): return path.contains(location) && children.contains { path.appending(path: $0.0).contains(location) }
        }
    }

    /// The node at `location` once this write is applied over `base` (the node there before it).
    func apply(to base: Node, at location: Path) -> Node {
        guard touches(location) else { return base }
        var result = base
        for (path, value) in placements {
            if let below = location.relative(to: path) {
                result = value.child(at: below)  // the write covers the location
            } else if let inside = path.relative(to: location) {
                result.set(inside, to: value)  // the write lands inside it
            }
        }
        return result
    }
}

/// The pending writes, by id (ids grow with time, so sorted ids are the writes' order) and filed by the
/// locations they write: a location's writes are found without visiting every pending one (a client
/// writing faster than its acknowledgements arrive holds hundreds).
struct PendingWrites: Sendable {
    private var byID: [Int64: PendingWrite] = [:]
    private var index = PathTrie<Int64>()

    /// Every location a pending write replaces.
    var allLocations: [Path] { byID.values.flatMap(\.locations) }

    mutating func insert(_ write: PendingWrite) {
        byID[write.id] = write
        for location in write.locations { index.insert(write.id, at: location) }
    }

    mutating func remove(_ id: Int64) -> PendingWrite? {
        guard let write = byID.removeValue(forKey: id) else { return nil }
        for location in write.locations { index.remove(at: location) { $0 == id } }
        return write
    }

    mutating func removeAll() {
        byID = [:]
        index = PathTrie()
    }

    /// The pending writes at, above or below `path`, oldest first.
    func overlapping(_ path: Path) -> [PendingWrite] {
        guard !byID.isEmpty else { return [] }
        return Self.inOrder(index.valuesOverlapping(path)).compactMap { byID[$0] }
    }

    /// `ids` once each, oldest first. Those filed at one location are in order already (ids grow), and
    /// most lookups meet one location: sorting those thousands on every acknowledgement dominated
    /// draining an offline queue.
    private static func inOrder(_ ids: [Int64]) -> [Int64] {
        zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 } ? ids : Set(ids).sorted()
    }

    /// The pending writes with a location at or above `path`, oldest first.
    func atOrAbove(_ path: Path) -> [PendingWrite] {
        guard !byID.isEmpty else { return [] }
        return Self.inOrder(index.valuesAtOrAbove(path)).compactMap { byID[$0] }
    }

    /// Whether a visible write replaces the whole node at `path` (a set or an update's key at or above
    /// it): what it shows there is then known whole, whatever the server has sent. The writes filed at or
    /// above `path` are exactly those; a priority write is filed below its node, so it never covers it
    /// (the node's value is still unknown).
    func cover(_ path: Path) -> Bool {
        guard !byID.isEmpty else { return false }
        return index.valuesAtOrAbove(path).contains { byID[$0]?.visible == true }
    }

    /// The keys of `path`'s children that a visible write replaces exactly (a set there, or an update's
    /// key): children known whole below a location that is not.
    func childKeysWritten(under path: Path) -> [ChildKey] {
        guard !byID.isEmpty else { return [] }
        return index.childValues(of: path).compactMap { key, ids in
            guard key != .priorityKey, ids.contains(where: { byID[$0]?.visible == true }) else { return nil }
            return key
        }
    }
}
