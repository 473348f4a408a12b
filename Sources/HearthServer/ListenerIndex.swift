import HearthCore

/// Who listens where in a namespace, as a trie of path keys, so a write visits only the listeners whose
/// locations it can change: those at or above a location it writes and those below it. Without it
/// every write visited every connected session (9,000 idle listeners elsewhere cost every write 9,000
/// checks; in ws.writes the 64 sessions' checks were a third of the loop's work per write).
///
/// A listener registered several times at one location (listens with different query tags) is counted,
/// and found once. Loop thread only.
final class ListenerIndex<Listener: AnyObject> {
    private final class Location {
        var children: [ChildKey: Location] = [:]
        /// Listeners here, with how many of their listens are here.
        var listeners: [ObjectIdentifier: (listener: Listener, count: Int)] = [:]
        /// Registrations in this location's subtree, this location included.
        var total = 0
    }

    private let root = Location()

    var isEmpty: Bool { root.total == 0 }

    func add(_ listener: Listener, at path: Path) {
        var location = root
        location.total += 1
        for key in path.keys {
            let next = location.children[key] ?? Location()
            location.children[key] = next
            location = next
            location.total += 1
        }
        let id = ObjectIdentifier(listener)
        location.listeners[id] = (listener, (location.listeners[id]?.count ?? 0) + 1)
    }

    func remove(_ listener: Listener, at path: Path) {
        var trail = [root]
        for key in path.keys {
            guard let next = trail[trail.count - 1].children[key] else { return }
            trail.append(next)
        }
        let id = ObjectIdentifier(listener)
        let location = trail[trail.count - 1]
        guard let entry = location.listeners[id] else { return }
        location.listeners[id] = entry.count > 1 ? (entry.listener, entry.count - 1) : nil
        for node in trail { node.total -= 1 }
        // Prune locations left empty, bottom up.
        for depth in stride(from: path.count, to: 0, by: -1) where trail[depth].total == 0 {
            trail[depth - 1].children[path.keys[depth - 1]] = nil
        }
    }

    /// Every listener at or above one of `locations`, or below one of them, once each.
    func listeners(overlapping locations: [Path]) -> [Listener] {
        var found: [Listener] = []
        var sources = 0
        for path in locations {
            var location = root
            var reached = true
            for key in path.keys {
                if !location.listeners.isEmpty {
                    sources += 1
                    found.append(contentsOf: location.listeners.values.lazy.map(\.listener))
                }
                guard let next = location.children[key] else {
                    reached = false
                    break
                }
                location = next
            }
            if reached { collectSubtree(location, into: &found, sources: &sources) }
        }
        guard sources > 1 else { return found }
        var seen = Set<ObjectIdentifier>()
        return found.filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    private func collectSubtree(_ location: Location, into found: inout [Listener], sources: inout Int) {
        if !location.listeners.isEmpty {
            sources += 1
            found.append(contentsOf: location.listeners.values.lazy.map(\.listener))
        }
        for child in location.children.values { collectSubtree(child, into: &found, sources: &sources) }
    }
}
