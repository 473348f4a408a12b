/// Evaluates a query's window over a node's children (docs/protocol.md §5.7): the children inside
/// the range, ordered by the query's index, cut to the limit.
public enum QueryWindow {
    /// One child in a window.
    public struct Entry: Sendable, Equatable {
        public var key: ChildKey
        public var node: Node
        /// The child's index value (empty for the key index).
        public var value: Node
    }

    /// The children of `node` that `params` selects, in query order. `index`, when given, must
    /// be the index of `node`'s children by `params.index`; it turns the scan into a range lookup.
    ///
    /// With `resolvingNodes: false`, entries found through `index` carry `Node.empty` instead of
    /// the child (children are never empty, so it marks "not looked up"): a view fills in the
    /// nodes it already holds, since one lookup in a million-child map costs more than the rest of
    /// the window.
    public static func entries(
        of node: Node, params: QueryParams, index: ChildIndex? = nil, resolvingNodes: Bool = true
    ) -> [Entry] {
        let children = node.children
        guard !children.isEmpty, params.limit?.count != 0 else { return [] }
        switch params.index {
        case .key:
            return keyIndexEntries(children, params: params)
        default:
            if let index, index.index == params.index {
                return indexedEntries(children, params: params, index: index, resolvingNodes: resolvingNodes)
            }
            return scannedEntries(children, params: params)
        }
    }

    /// The window as a node: the selected children, no priority; empty when none.
    public static func node(of node: Node, params: QueryParams, index: ChildIndex? = nil) -> Node {
        if params.loadsAllData { return node }
        return makeNode(entries(of: node, params: params, index: index))
    }

    static func makeNode(_ entries: [Entry]) -> Node {
        var sorted = entries.map { (key: $0.key, value: $0.node) }
        sorted.sort { $0.key < $1.key }
        return Node(children: ChildrenMap(sortedUniqueElements: sorted))
    }

    // MARK: Bounds

    /// Three-way comparison of a position against a bound, under `index`.
    @inlinable
    static func compare(value: Node, key: ChildKey, to bound: QueryBound, index: QueryIndex) -> Int {
        if case .key = index {
            // The key index's bound is the key itself (the JS SDK's KeyIndex.makePost).
            return boundKeyName(bound).compare(key: key)
        }
        let c = ValueOrder.compare(value, bound.value)
        return c != 0 ? c : bound.name.compare(key: key)
    }

    @inlinable
    static func boundKeyName(_ bound: QueryBound) -> BoundName {
        if let string = bound.value.stringValue { return BoundName(wire: string) }
        if let number = bound.value.numberValue, case .integer(let i) = Node(number).storage {
            return .key(ChildKey(String(i)))
        }
        return bound.value.isEmpty ? .min : bound.name
    }

    /// True when the position is at or after the start (strictly after when exclusive).
    @inlinable
    static func isAfterStart(value: Node, key: ChildKey, params: QueryParams) -> Bool {
        guard let start = params.start else { return true }
        let c = compare(value: value, key: key, to: start, index: params.index)
        return start.inclusive ? c >= 0 : c > 0
    }

    @inlinable
    static func isBeforeEnd(value: Node, key: ChildKey, params: QueryParams) -> Bool {
        guard let end = params.end else { return true }
        let c = compare(value: value, key: key, to: end, index: params.index)
        return end.inclusive ? c <= 0 : c < 0
    }

    /// True when a child at this position is inside the query's range (ignoring the limit).
    public static func isInRange(value: Node, key: ChildKey, params: QueryParams) -> Bool {
        isAfterStart(value: value, key: key, params: params) && isBeforeEnd(value: value, key: key, params: params)
    }

    /// Applies the limit to a range of ranks `[lower, upper)`.
    static func limitRange(_ lower: Int, _ upper: Int, _ limit: QueryLimit?) -> Range<Int> {
        guard lower < upper else { return lower..<lower }
        guard let limit else { return lower..<upper }
        switch limit.anchor {
        case .first: return lower..<Swift.min(upper, lower + limit.count)
        case .last: return Swift.max(lower, upper - limit.count)..<upper
        }
    }

    // MARK: Strategies

    static func keyIndexEntries(_ children: ChildrenMap, params: QueryParams) -> [Entry] {
        let lower = children.rank { key in isAfterStart(value: .empty, key: key, params: params) ? 1 : -1 }
        let upper = children.rank { key in isBeforeEnd(value: .empty, key: key, params: params) ? -1 : 1 }
        let ranks = limitRange(lower, upper, params.limit)
        var result: [Entry] = []
        result.reserveCapacity(ranks.count)
        children.forEach(fromRank: ranks.lowerBound) { key, child in
            guard result.count < ranks.count else { return false }
            result.append(Entry(key: key, node: child, value: .empty))
            return true
        }
        return result
    }

    static func indexedEntries(
        _ children: ChildrenMap, params: QueryParams, index: ChildIndex, resolvingNodes: Bool
    ) -> [Entry] {
        let positions = index.positions
        let lower = positions.rank { p in isAfterStart(value: p.value, key: p.key, params: params) ? 1 : -1 }
        let upper = positions.rank { p in isBeforeEnd(value: p.value, key: p.key, params: params) ? -1 : 1 }
        let ranks = limitRange(lower, upper, params.limit)
        var result: [Entry] = []
        result.reserveCapacity(ranks.count)
        positions.forEach(fromRank: ranks.lowerBound) { position, _ in
            guard result.count < ranks.count else { return false }
            let node = resolvingNodes ? children[position.key] ?? .empty : .empty
            result.append(Entry(key: position.key, node: node, value: position.value))
            return true
        }
        return result
    }

    static func scannedEntries(_ children: ChildrenMap, params: QueryParams) -> [Entry] {
        var kept: [Entry] = []
        children.forEach { key, child in
            let value = params.index.indexValue(of: child)
            if isInRange(value: value, key: key, params: params) {
                kept.append(Entry(key: key, node: child, value: value))
            }
            return true
        }
        kept.sort { IndexPosition(value: $0.value, key: $0.key) < IndexPosition(value: $1.value, key: $1.key) }
        let ranks = limitRange(0, kept.count, params.limit)
        return ranks.count == kept.count ? kept : Array(kept[ranks])
    }
}
