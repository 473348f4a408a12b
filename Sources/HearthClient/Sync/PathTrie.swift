import HearthCore

/// Values filed by location, for the two questions a write asks: what is at or above this path, and
/// what is below it. A write's cost is then its depth plus what it touches, not the number of paths
/// filed (a client may hold a thousand listens).
struct PathTrie<Value>: Sendable where Value: Sendable {
    private final class Box: @unchecked Sendable {  // owned by one trie; copied on write
        var values: [Value] = []
        var children: [ChildKey: Box] = [:]

        func copy() -> Box {
            let box = Box()
            box.values = values
            box.children = children.mapValues { $0.copy() }
            return box
        }
    }

    private var root = Box()

    private mutating func uniqueRoot() {
        if !isKnownUniquelyReferenced(&root) { root = root.copy() }
    }

    mutating func insert(_ value: Value, at path: Path) {
        uniqueRoot()
        var box = root
        for key in path.keys {
            if let next = box.children[key] { box = next } else {
                let next = Box()
                box.children[key] = next
                box = next
            }
        }
        box.values.append(value)
    }

    /// Removes the values at `path` that `matches` selects.
    mutating func remove(at path: Path, where matches: (Value) -> Bool) {
        uniqueRoot()
        var trail: [(Box, ChildKey)] = []
        var box = root
        for key in path.keys {
            guard let next = box.children[key] else { return }
            trail.append((box, key))
            box = next
        }
        box.values.removeAll(where: matches)
        // Prune empty branches.
        var current = box
        while let (parent, key) = trail.popLast(), current.values.isEmpty, current.children.isEmpty {
            parent.children[key] = nil
            current = parent
        }
    }

    /// Values at `path` itself.
    func values(at path: Path) -> [Value] {
        var box = root
        for key in path.keys {
            guard let next = box.children[key] else { return [] }
            box = next
        }
        return box.values
    }

    /// The values from the root down to `path`, and the node at `path` (nil when nothing is stored there
    /// or below).
    private func walk(to path: Path) -> (found: [Value], reached: Box?) {
        var found = root.values
        var box = root
        for key in path.keys {
            guard let next = box.children[key] else { return (found, nil) }
            box = next
            found += box.values
        }
        return (found, box)
    }

    /// Values at `path` and at every location above it.
    func valuesAtOrAbove(_ path: Path) -> [Value] { walk(to: path).found }

    /// Values at `path`, above it and below it: everything a write at `path` can affect.
    func valuesOverlapping(_ path: Path) -> [Value] {
        let (above, reached) = walk(to: path)
        return above + Self.valuesBelow(reached)
    }

    /// Values strictly below `path`.
    func valuesBelow(_ path: Path) -> [Value] {
        Self.valuesBelow(walk(to: path).reached)
    }

    /// Values at `path` and below it.
    func valuesAtOrBelow(_ path: Path) -> [Value] {
        guard let box = walk(to: path).reached else { return [] }
        return box.values + Self.valuesBelow(box)
    }

    /// The keys of `path`'s children that hold values themselves, with those values (not the values
    /// further down): the cost is the number of children filed, whatever lies below them.
    func childValues(of path: Path) -> [(key: ChildKey, values: [Value])] {
        guard let box = walk(to: path).reached else { return [] }
        return box.children.compactMap { key, child in child.values.isEmpty ? nil : (key, child.values) }
    }

    private static func valuesBelow(_ box: Box?) -> [Value] {
        guard let box else { return [] }
        var found: [Value] = []
        var stack = Array(box.children.values)
        while let next = stack.popLast() {
            found += next.values
            stack += next.children.values
        }
        return found
    }
}
