/// A value in the database: empty (null), a leaf (boolean, number or string) or children, each
/// non-empty node optionally carrying a priority (docs/protocol.md §5.1, §5.3).
///
/// Nodes are immutable values with structural sharing: copying one is O(1), and writing below a
/// node copies only the nodes on the written path (see `SortedMap`). Empty nodes never have a
/// priority and never appear as children.
///
///     var tree = Node.empty
///     tree.set(Path("users/ada/name"), to: Node("Ada"))
///     tree.child(at: Path("users/ada")).childCount   // 1
public struct Node: Sendable {
    @usableFromInline
    enum Storage: Sendable {
        case empty
        case bool(Bool)
        /// Integers are kept exact (clients send 64-bit longs) but compare and hash as binary64.
        case integer(Int64)
        case double(Double)
        case string(String)
        case children(ChildrenMap)
        /// A non-empty node with a priority; rare, so kept out of line.
        indirect case prioritized(Node, Priority)
    }

    @usableFromInline var storage: Storage

    @inlinable init(storage: Storage) { self.storage = storage }

    /// The empty node (JSON `null`): what every absent location holds.
    public static let empty = Node(storage: .empty)

    @inlinable public init(_ value: Bool) { storage = .bool(value) }
    @inlinable public init(_ value: Int64) { storage = .integer(value) }
    @inlinable public init(_ value: Int) { storage = .integer(Int64(value)) }
    @inlinable public init(_ value: String) { storage = .string(value) }

    /// A number. Integral values within ±2^53 are kept as integers, and -0 becomes 0, so a number
    /// has one representation however it was written (`1`, `1.0`, `1e0`).
    @inlinable public init(_ value: Double) {
        precondition(value.isFinite, "JSON has no NaN or infinity")
        if abs(value) <= 9_007_199_254_740_992, Double(Int64(value)) == value {
            storage = .integer(Int64(value))
        } else {
            storage = .double(value)
        }
    }

    /// A node with these children; empty when `children` is.
    @inlinable public init(children: ChildrenMap) {
        storage = children.isEmpty ? .empty : .children(children)
    }

    /// A node from key/value pairs; empty values are dropped.
    public init(_ pairs: KeyValuePairs<String, Node>) {
        var children = ChildrenMap()
        for (key, value) in pairs where !value.isEmpty { children[ChildKey(key)] = value }
        self.init(children: children)
    }
}

// MARK: - Inspecting

extension Node {
    /// The node without its priority.
    @inlinable var unprioritized: Node {
        if case .prioritized(let node, _) = storage { return node }
        return self
    }

    @inlinable public var isEmpty: Bool {
        if case .empty = storage { return true }
        return false
    }

    /// True for booleans, numbers and strings.
    @inlinable public var isLeaf: Bool {
        switch unprioritized.storage {
        case .bool, .integer, .double, .string: return true
        case .empty, .children, .prioritized: return false
        }
    }

    /// True when the node has children.
    @inlinable public var hasChildren: Bool {
        if case .children = unprioritized.storage { return true }
        return false
    }

    /// The node's children (empty for leaves and the empty node).
    @inlinable public var children: ChildrenMap {
        if case .children(let map) = unprioritized.storage { return map }
        return ChildrenMap()
    }

    @inlinable public var childCount: Int { children.count }

    /// The node's priority, if it has one.
    @inlinable public var priority: Priority? {
        if case .prioritized(_, let priority) = storage { return priority }
        return nil
    }

    /// The leaf's value as a Swift value: `Bool`, `Int64`, `Double` or `String`; nil otherwise.
    public var leafValue: LeafValue? {
        switch unprioritized.storage {
        case .bool(let v): return .bool(v)
        case .integer(let v): return .integer(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .empty, .children, .prioritized: return nil
        }
    }

    /// The number this leaf holds, as binary64 (how Firebase compares and hashes numbers).
    @inlinable public var numberValue: Double? {
        switch unprioritized.storage {
        case .integer(let v): return Double(v)
        case .double(let v): return v
        default: return nil
        }
    }

    @inlinable public var stringValue: String? {
        if case .string(let v) = unprioritized.storage { return v }
        return nil
    }

    @inlinable public var boolValue: Bool? {
        if case .bool(let v) = unprioritized.storage { return v }
        return nil
    }

    /// The child at `key`, or the empty node.
    @inlinable public func child(_ key: ChildKey) -> Node {
        if case .children(let map) = unprioritized.storage { return map[key] ?? .empty }
        return .empty
    }

    /// The descendant at `path`, or the empty node. `.priority` as the last segment reads the
    /// node's priority as a leaf.
    public func child(at path: Path) -> Node {
        var node = self
        for (index, key) in path.keys.enumerated() {
            if key == .priorityKey && index == path.count - 1 { return node.priority.map(\.node) ?? .empty }
            node = node.child(key)
            if node.isEmpty { return .empty }
        }
        return node
    }

    /// Number of leaves in this subtree.
    public var leafCount: Int {
        if isLeaf { return 1 }
        var total = 0
        children.forEach { _, child in total += child.leafCount; return true }
        return total
    }
}

// MARK: - Changing

extension Node {
    /// This node with `priority` (ignored on the empty node, which never has one).
    public func withPriority(_ priority: Priority?) -> Node {
        let base = unprioritized
        guard let priority, !base.isEmpty else { return base }
        return Node(storage: .prioritized(base, priority))
    }

    /// Replaces the node at `path` (the empty node removes it) and returns the node that was there.
    /// Ancestors left without children become empty; ancestors keep their priorities. A last
    /// segment `.priority` sets only the priority of the node above it, and is ignored when that
    /// node is empty (the returned node is then the old priority as a leaf).
    @discardableResult
    public mutating func set(_ path: Path, to value: Node) -> Node {
        set(path.keys[...], to: value)
    }

    /// Returns a copy with the node at `path` replaced.
    public func setting(_ path: Path, to value: Node) -> Node {
        var copy = self
        copy.set(path, to: value)
        return copy
    }

    mutating func set(_ keys: ArraySlice<ChildKey>, to value: Node) -> Node {
        guard let first = keys.first else {
            let old = self
            self = value
            return old
        }
        if first == .priorityKey && keys.count == 1 {
            let old = priority?.node ?? .empty
            self = withPriority(Priority(value))
            return old
        }
        // Take the storage apart so the children map is held once and mutates in place.
        let priority = self.priority
        var map: ChildrenMap
        var leaf: Node?
        switch unprioritized.storage {
        case .children(let existing): map = existing
        case .empty: map = ChildrenMap()
        default:
            map = ChildrenMap()
            leaf = self
        }
        storage = .empty
        let rest = keys.dropFirst()
        var emptied = false
        var old = Node.empty
        let existed = map.modifyExisting(first) { child in
            old = child.set(rest, to: value)
            emptied = child.isEmpty
        }
        if existed {
            if emptied { map.removeValue(for: first) }
        } else if !value.isEmpty {
            var child = Node.empty
            _ = child.set(rest, to: value)
            if !child.isEmpty { map[first] = child }
        }
        if let leaf, map.isEmpty {
            // Nothing lands below a leaf (a remove, or a priority on a missing child): the leaf
            // stays, as the JS SDK's LeafNode.updateChild returns itself for an empty child.
            self = leaf
            return old
        }
        self = Node(children: map).withPriority(priority)
        return old
    }

    /// Replaces the child at `key`, like `set(Path([key]), to:)`.
    public mutating func setChild(_ key: ChildKey, to value: Node) {
        _ = set([key][...], to: value)
    }
}

/// The JSON value of a leaf.
public enum LeafValue: Sendable, Hashable {
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
}

/// A node's priority: a number or a string (docs/protocol.md §5.3).
public enum Priority: Sendable, Hashable {
    case number(Double)
    case string(String)

    /// The priority a leaf stands for (numbers and strings); nil for anything else.
    public init?(_ node: Node) {
        if let number = node.numberValue {
            self = .number(number)
        } else if let string = node.stringValue {
            self = .string(string)
        } else {
            return nil
        }
    }

    /// The priority as a leaf node.
    public var node: Node {
        switch self {
        case .number(let v): return Node(v)
        case .string(let v): return Node(v)
        }
    }
}

extension ChildKey {
    /// The pseudo-key that addresses a node's priority in paths (`users/ada/.priority`).
    public static let priorityKey = ChildKey(".priority")
}

/// The children of a node, in Firebase key order.
public typealias ChildrenMap = SortedMap<ChildKey, Node>
