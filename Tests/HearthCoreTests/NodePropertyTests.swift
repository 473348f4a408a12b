import Testing
@testable import HearthCore

/// Properties of random trees, replayed from fixed seeds: the JSON codec round-trips and the
/// Firebase hash (docs/protocol.md §4) depends on the value alone.
struct NodePropertyTests {
    /// Builds random trees with the awkward parts of the data model: priorities, integer-like and
    /// non-BMP keys, floats across the whole binary64 range, integers beyond 2^53, and strings
    /// that need escaping.
    struct TreeGenerator {
        var random: SeededGenerator

        static let keys = [
            "a", "b", "name", "0", "1", "2", "3", "7", "07", "10", "-1", "-2147483648", "2147483648",
            "00", "é", "e\u{301}", "🐵", "\u{E000}", "日本", "key with space", "~", "_", "A",
        ]

        mutating func key() -> ChildKey { ChildKey(Self.keys.randomElement(using: &random)!) }

        mutating func double() -> Double {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return Double.random(in: -1e6...1e6, using: &random)
            case 1: return Double.random(in: -1...1, using: &random) * pow10(Int.random(in: -320...300, using: &random))
            case 2:
                // Any finite bit pattern, subnormals included.
                while true {
                    let value = Double(bitPattern: random.next())
                    if value.isFinite { return value }
                }
            default: return [0.1, -0.5, 1e21, 1e-7, 123e-20, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -0.0].randomElement(using: &random)!
            }
        }

        func pow10(_ exponent: Int) -> Double {
            var value = 1.0
            for _ in 0..<abs(exponent) { value = exponent < 0 ? value / 10 : value * 10 }
            return value
        }

        mutating func string() -> String {
            let pieces = ["", "x", "\"", "\\", "\n", "\u{1}", "\u{7F}", "é", "🐵", "\u{E000}", "null", "{}", " "]
            return (0..<Int.random(in: 0..<4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }

        mutating func leaf() -> Node {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: return Node(Bool.random(using: &random))
            case 1: return Node(Int.random(in: -1000...1000, using: &random))
            case 2: return Node(Int64.random(in: Int64.min...Int64.max, using: &random))
            case 3: return Node(double())
            default: return Node(string())
            }
        }

        mutating func priority() -> Priority? {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: return .number(Node(double()).numberValue!)
            case 1: return .number(Double(Int.random(in: -5...5, using: &random)))
            case 2: return .string(string())
            default: return nil
            }
        }

        mutating func tree(depth: Int = 0) -> Node {
            if depth >= 4 || Int.random(in: 0..<3, using: &random) == 0 { return leaf().withPriority(priority()) }
            var children = ChildrenMap()
            for _ in 0..<Int.random(in: 1...5, using: &random) { children[key()] = tree(depth: depth + 1) }
            return Node(children: children).withPriority(priority())
        }
    }

    static let seeds: [UInt64] = Array(1...8)

    @Test("Export JSON reads back as the same tree", arguments: seeds)
    func exportRoundTrips(seed: UInt64) throws {
        var generator = TreeGenerator(random: SeededGenerator(seed: seed))
        for _ in 0..<100 {
            let node = generator.tree()
            #expect(try Node(json: node.json(.export)) == node, "\(node.json(.export))")
            #expect(try Node(json: node.json(.pretty(.export))) == node)
        }
    }

    @Test("REST JSON reads back as the same tree without priorities", arguments: seeds)
    func restRoundTripsWithoutPriorities(seed: UInt64) throws {
        var generator = TreeGenerator(random: SeededGenerator(seed: seed))
        for _ in 0..<100 {
            let node = generator.tree()
            #expect(try Node(json: node.json(.rest)) == node.removingPriorities(), "\(node.json(.rest))")
            #expect(try Node(json: node.json(.pretty(.rest))) == node.removingPriorities())
        }
    }

    /// Every leaf (and every node's priority) of a tree, by path.
    static func locations(of node: Node, at path: Path = .root) -> [Path] {
        var paths = [path]
        node.children.forEach { key, child in
            paths += locations(of: child, at: path.appending(key))
            return true
        }
        return paths
    }

    @Test("Equal trees built in different orders hash alike", arguments: seeds)
    func hashIgnoresInsertionOrder(seed: UInt64) {
        var generator = TreeGenerator(random: SeededGenerator(seed: seed))
        for _ in 0..<40 {
            let node = generator.tree()
            guard node.hasChildren else { continue }
            // Rebuild from the leaves in a shuffled order, then restore the priorities bottom-up.
            var leaves: [(Path, Node)] = []
            var priorities: [(Path, Priority)] = []
            for path in Self.locations(of: node) {
                let child = node.child(at: path)
                if child.isLeaf { leaves.append((path, child)) }
                if let priority = child.priority { priorities.append((path, priority)) }
            }
            leaves.shuffle(using: &generator.random)
            var rebuilt = Node.empty
            for (path, leaf) in leaves { rebuilt.set(path, to: leaf) }
            for (path, priority) in priorities.sorted(by: { $0.0.count > $1.0.count }) {
                rebuilt.set(path.appending(.priorityKey), to: priority.node)
            }
            #expect(rebuilt == node)
            #expect(rebuilt.hash == node.hash)
        }
    }

    @Test("Changing any leaf or priority changes the hash", arguments: seeds)
    func hashSeesEveryLeafAndPriority(seed: UInt64) {
        var generator = TreeGenerator(random: SeededGenerator(seed: seed))
        for _ in 0..<25 {
            let node = generator.tree()
            let hash = node.hash
            // A sample of locations: each check rehashes the whole tree, and SHA-1 is slow in debug builds.
            let sample = Self.locations(of: node).shuffled(using: &generator.random).prefix(6)
            for path in sample {
                let child = node.child(at: path)
                if child.isLeaf {
                    // A different leaf of another type (numbers hash as binary64, so avoid equal values).
                    let replacement = child.stringValue == nil ? Node("changed") : Node(42.5)
                    let changed = node.setting(path, to: replacement.withPriority(child.priority))
                    #expect(changed.hash != hash, "leaf at \(path)")
                }
                let priority: Priority = child.priority == .string("other") ? .number(-7) : .string("other")
                let reprioritized = path.isRoot ? node.withPriority(priority) : node.setting(path.appending(.priorityKey), to: priority.node)
                #expect(reprioritized.hash != hash, "priority at \(path)")
            }
        }
    }
}
