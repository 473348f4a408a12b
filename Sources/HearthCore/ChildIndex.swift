/// A child's place in a query's order: its index value, then its key (docs/protocol.md §5.6).
public struct IndexPosition: ThreeWayComparable, Hashable, Sendable {
    public var value: Node
    public var key: ChildKey

    @inlinable public init(value: Node, key: ChildKey) {
        self.value = value
        self.key = key
    }

    @inlinable
    public static func < (lhs: IndexPosition, rhs: IndexPosition) -> Bool { compare(lhs, rhs) < 0 }

    @inlinable
    public static func compare(_ lhs: IndexPosition, _ rhs: IndexPosition) -> Int {
        let c = ValueOrder.compare(lhs.value, rhs.value)
        return c != 0 ? c : ChildKey.compare(lhs.key, rhs.key)
    }

    @inlinable
    public static func == (lhs: IndexPosition, rhs: IndexPosition) -> Bool {
        lhs.key == rhs.key && ValueOrder.compare(lhs.value, rhs.value) == 0
    }

    @inlinable
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }
}

/// An ordered index of one location's children by one `QueryIndex`, so that a windowed query
/// (`orderByChild("score").limitToLast(50)` over a million children) finds its window in
/// O(log n + window) instead of sorting every child.
public struct ChildIndex: Sendable {
    /// Stands in for "present" in the index's map (the position is the whole entry).
    public struct Member: Sendable {}

    public let index: QueryIndex
    public private(set) var positions: SortedMap<IndexPosition, Member>

    /// Builds the index of `node`'s children.
    public init(index: QueryIndex, of node: Node) {
        self.index = index
        var entries: [(key: IndexPosition, value: Member)] = []
        entries.reserveCapacity(node.childCount)
        node.children.forEach { key, child in
            entries.append((IndexPosition(value: index.indexValue(of: child), key: key), Member()))
            return true
        }
        entries.sort { $0.key < $1.key }
        positions = SortedMap(sortedUniqueElements: entries)
    }

    /// Moves child `key` from its old value to its new one (either may be empty: added, removed).
    public mutating func update(key: ChildKey, old: Node, new: Node) {
        let oldValue = old.isEmpty ? nil : index.indexValue(of: old)
        let newValue = new.isEmpty ? nil : index.indexValue(of: new)
        if let oldValue, let newValue, ValueOrder.compare(oldValue, newValue) == 0, oldValue == newValue { return }
        if let oldValue { positions.removeValue(for: IndexPosition(value: oldValue, key: key)) }
        if let newValue { positions.insert(Member(), for: IndexPosition(value: newValue, key: key)) }
    }

    public var count: Int { positions.count }
}

/// Where an index lives: a location and what it orders by.
public struct IndexKey: Hashable, Sendable {
    public var path: Path
    public var index: QueryIndex

    public init(path: Path, index: QueryIndex) {
        self.path = path
        self.index = index
    }
}
