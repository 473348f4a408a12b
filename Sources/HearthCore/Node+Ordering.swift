/// Firebase's value order and priority order (docs/protocol.md §5.6).
///
/// Value order: empty < false < true < numbers (ascending, as binary64) < strings (UTF-16 order)
/// < nodes with children (all equal to each other). Priority order: no priority < numbers < strings.
public enum ValueOrder {
    /// Rank of a node's type in value order.
    @inlinable
    static func typeRank(_ node: Node) -> Int {
        switch node.unprioritized.storage {
        case .empty: return 0
        case .bool(let b): return b ? 2 : 1
        case .integer, .double: return 3
        case .string: return 4
        case .children: return 5
        case .prioritized: return 6  // unreachable: unprioritized
        }
    }

    /// Three-way comparison of two nodes as index values (orderByValue / orderByChild), without
    /// the tie-break on keys.
    @inlinable
    public static func compare(_ a: Node, _ b: Node) -> Int {
        let ra = typeRank(a), rb = typeRank(b)
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a.unprioritized.storage, b.unprioritized.storage) {
        case (.integer(let x), .integer(let y)):
            // Compare as binary64, as the spec asks (§5.1, §4.3) and as JS clients re-filtering a
            // window will: 9007199254740993 and 9007199254740992 are the same number to them.
            let a = Double(x), b = Double(y)
            return a == b ? 0 : (a < b ? -1 : 1)
        case (.string(let x), .string(let y)):
            return KeyOrder.compareUTF16(x, y)
        default:
            if ra == 3 {
                let x = a.numberValue!, y = b.numberValue!
                return x == y ? 0 : (x < y ? -1 : 1)
            }
            return 0
        }
    }

    /// Three-way comparison of two priorities, nil (no priority) lowest.
    @inlinable
    public static func compare(_ a: Priority?, _ b: Priority?) -> Int {
        switch (a, b) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case let (.number(x)?, .number(y)?): return x == y ? 0 : (x < y ? -1 : 1)
        case (.number?, .string?): return -1
        case (.string?, .number?): return 1
        case let (.string(x)?, .string(y)?): return KeyOrder.compareUTF16(x, y)
        }
    }
}

extension Node: Equatable {
    /// Deep equality, O(1) when both share storage. Numbers compare as binary64 (`1` == `1.0`);
    /// priorities count.
    public static func == (lhs: Node, rhs: Node) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.empty, .empty): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.integer, .double), (.double, .integer), (.double, .double):
            return lhs.numberValue == rhs.numberValue
        case (.prioritized(let a, let pa), .prioritized(let b, let pb)):
            return pa == pb && a == b
        case (.children(let a), .children(let b)):
            if a.isIdentical(to: b) { return true }
            guard a.count == b.count else { return false }
            var equal = true
            var ib = b.makeIterator()
            a.forEach { key, value in
                guard let (kb, vb) = ib.next(), kb == key, vb == value else {
                    equal = false
                    return false
                }
                return true
            }
            return equal
        default:
            return false
        }
    }
}

extension Node: Hashable {
    /// Hashes consistently with `==` (numbers as binary64). Deep: O(size) for children nodes.
    public func hash(into hasher: inout Hasher) {
        switch storage {
        case .empty: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .integer, .double: hasher.combine(numberValue!)
        case .string(let s): hasher.combine(s)
        case .prioritized(let node, let priority):
            hasher.combine(priority)
            node.hash(into: &hasher)
        case .children(let map):
            hasher.combine(map.count)
            map.forEach { key, value in
                hasher.combine(key)
                value.hash(into: &hasher)
                return true
            }
        }
    }
}
