import HearthCore
import HearthSupport
import Testing
@testable import HearthRules

/// The lazy post-write tree must answer every question exactly as the merged `Node` would.
struct TreeViewTests {
    /// Compares a view with the node it stands for, recursively over the union of their keys.
    ///
    /// Priorities are compared for single writes only: applying an update's writes one by one
    /// (`Node.set`) drops a node's priority when an early write leaves it empty for a moment, while
    /// the view keeps it whenever the node exists after the whole update (the update is one write).
    func expectSame(_ view: TreeView, _ node: Node, _ path: String, depth: Int = 0, priorities: Bool = true) {
        #expect(view.isEmpty == node.isEmpty, "isEmpty at \(path)")
        #expect(view.hasChildren == node.hasChildren, "hasChildren at \(path)")
        #expect(view.leaf == (node.isLeaf ? node : nil), "leaf at \(path)")
        if priorities {
            #expect(view.priority == node.priority, "priority at \(path)")
            #expect(view.materialized == node, "materialized at \(path)")
        }
        guard depth < 4 else { return }
        var keys = Set<ChildKey>()
        node.children.forEach { key, _ in keys.insert(key); return true }
        if case .overlay(let overlay) = view {
            for entry in overlay.overrides { keys.insert(entry.key) }
            overlay.base.children.forEach { key, _ in keys.insert(key); return true }
        }
        for key in keys {
            expectSame(view.child(key), node.child(key), "\(path)/\(key)", depth: depth + 1, priorities: priorities)
        }
    }

    func randomNode(_ random: inout SplitMix64, depth: Int) -> Node {
        switch random.next(below: depth == 0 ? 3 : 6) {
        case 0: return .empty
        case 1: return Node(random.next(below: 3))
        case 2: return Node("s\(random.next(below: 3))")
        default:
            var children = ChildrenMap()
            for _ in 0..<random.next(below: 4) {
                let child = randomNode(&random, depth: depth - 1)
                if !child.isEmpty { children[ChildKey("k\(random.next(below: 4))")] = child }
            }
            let node = Node(children: children)
            return random.next(below: 4) == 0 ? node.withPriority(.number(Double(random.next(below: 9)))) : node
        }
    }

    func randomPath(_ random: inout SplitMix64) -> Path {
        Path((0..<(1 + random.next(below: 3))).map { _ in ChildKey("k\(random.next(below: 4))") })
    }

    @Test func overlayMatchesTheMergedNode() {
        var random = SplitMix64(seed: 99)
        for _ in 0..<3000 {
            let root = randomNode(&random, depth: 3)
            var writes: [(Path, Node)] = []
            for _ in 0..<(1 + random.next(below: 3)) {
                let path = randomPath(&random)
                if writes.contains(where: { $0.0.overlaps(path) }) { continue }
                writes.append((path, randomNode(&random, depth: 2)))
            }
            var merged = root
            for (path, value) in writes { merged.set(path, to: value) }
            let view = RuleSet.merge(writes, into: root)
            expectSame(view, merged, "", priorities: writes.count == 1)
        }
    }
}
