import HearthCore

/// What a filtered query's view holds of the server's data at its location (the official SDKs' server
/// cache of a query view, and their ViewProcessor's rules for it).
///
/// The server sends a query two kinds of data: its tagged listen's data, which is the query's window, and
/// untagged data meant for default listens, which is everything at a location. The cache keeps the
/// location's data unfiltered (`isWindow` false) until tagged data comes, then only the window; a push at
/// or above the location replaces it either way. What cannot be trusted is ignored: data deeper than a
/// child for a child the cache does not hold whole (it was sent for another listener), and a merge before
/// the cache holds anything (it belongs to an earlier listen of the location).
struct QueryCache: Sendable {
    let params: QueryParams
    var node: Node = .empty
    /// The location's data came whole: from a push at or above it, the listen's `ok`, or the disk cache.
    var isComplete = false
    /// `node` holds only the query's window (tagged data); otherwise the location's data, unfiltered.
    var isWindow = false

    init(params: QueryParams) { self.params = params }

    /// Whether the child `key` is held whole: all of it is known (complete and unfiltered), or it is in
    /// the cache (children come whole).
    func holdsChild(_ key: ChildKey) -> Bool {
        (isComplete && !isWindow) || !node.child(key).isEmpty
    }

    /// A push replacing the node at `relative` (below the view's location; `.root` is the location) with
    /// `value`; `tagged` when it came for this query's listen.
    mutating func applyOverwrite(at relative: Path, _ value: Node, tagged: Bool) {
        // Tagged data is a window; untagged data below a window is filtered into it. Untagged data at the
        // location makes the cache unfiltered again.
        let windowing = tagged || (isWindow && !relative.isRoot)
        if relative.isRoot {
            node = windowing ? window(value) : value
            isComplete = true
            isWindow = windowing
        } else if windowing && !isWindow {
            node = window(node.setting(relative, to: value))
            isWindow = true
        } else if relative.count == 1 || holdsChild(relative.first!) {
            node.set(relative, to: value)
            if windowing { node = window(node) }
        }
    }

    /// The query's own listen answered `ok`: its data has all come (none when the hash it sent matched),
    /// and from now on the server sends it every change to the window (Hearth's server filters every
    /// tagged listen), so only the window is kept: data beyond it would be windowed again on every change.
    mutating func listenCompleted() {
        isComplete = true
        if !isWindow {
            node = window(node)
            isWindow = true
        }
    }

    /// A merge push: each `(relative path, node)` replaces what is there (paths below the view's location,
    /// none inside another).
    mutating func applyMerge(_ entries: [(Path, Node)], tagged: Bool) {
        guard isComplete || !node.isEmpty else { return }
        let windowing = tagged || isWindow
        // Each child is replaced as one: the child held with the entries under it applied. An entry deeper
        // than a child the cache does not hold is dropped, as in a single push.
        var byChild: [ChildKey: [(Path, Node)]] = [:]
        for (path, value) in entries {
            guard let key = path.first else { continue }
            byChild[key, default: []].append((Path(Array(path.keys.dropFirst())), value))
        }
        var updated = node
        for (key, below) in byChild where below.contains(where: { $0.0.isRoot }) || holdsChild(key) {
            var child = node.child(key)
            for (path, value) in below { child.set(path, to: value) }
            updated.setChild(key, to: child)
        }
        node = windowing ? window(updated) : updated
        isWindow = windowing
    }

    /// The view's data with the pending writes over it (oldest first): a write at or above the location
    /// replaces it, a write at a child replaces the child, and a deeper write lands only in a child the
    /// view holds whole (ignored otherwise, until the server sends the child).
    func visible(at location: Path, with writes: [PendingWrite]) -> Node {
        var result = node
        var whole = isComplete && !isWindow
        for write in writes where write.visible {
            for (target, value) in write.placements {
                if let above = location.relative(to: target) {
                    result = value.child(at: above)
                    whole = true
                } else if let inside = target.relative(to: location), let key = inside.first {
                    if inside.count == 1 || whole || !result.child(key).isEmpty { result.set(inside, to: value) }
                }
            }
        }
        return result
    }

    /// The hash of what the server would send the query now: its window of the cache.
    var windowHash: String { window(node).hash }

    private func window(_ node: Node) -> Node { QueryWindow.node(of: node, params: params) }
}
