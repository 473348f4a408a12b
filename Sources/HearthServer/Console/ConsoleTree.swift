import HearthCore

/// One page of a location's children for the console's tree view (`/console/api/children`): leaves
/// with their values, inner nodes with their number of children, never a whole subtree. A namespace
/// of a million leaves opens by reading 100 of them. Pure: reads a tree, returns JSON.
struct ConsoleTreePage {
    /// Children per page unless asked otherwise, and the most one page may hold.
    static let defaultLimit = 100
    static let maxLimit = 500

    let path: Path
    let node: Node
    let after: ChildKey?
    let limit: Int

    /// `limit` is clamped to 1…``maxLimit``.
    init(root: Node, path: Path, after: String?, limit: Int?) {
        self.path = path
        node = root.child(at: path)
        self.after = after.map { ChildKey($0) }
        self.limit = min(max(limit ?? Self.defaultLimit, 1), Self.maxLimit)
    }

    func json() -> String {
        let children = node.children
        var rank = after.map { key in children.rank { ChildKey.compare($0, key) <= 0 ? -1 : 1 } } ?? 0
        var rows: [String] = []
        rows.reserveCapacity(min(limit, children.count))
        children.forEach(fromRank: rank) { key, child in
            guard rows.count < limit else { return false }
            rank += 1
            let name = Node(key.string).json()
            if child.hasChildren {
                rows.append("{\"key\":\(name),\"leaf\":false,\"count\":\(child.childCount)}")
            } else {
                rows.append("{\"key\":\(name),\"leaf\":true,\"value\":\(child.withPriority(nil).json())}")
            }
            return true
        }
        let value = node.hasChildren || node.isEmpty ? "null" : node.withPriority(nil).json()
        return "{\"path\":\(Node(path.slashed).json()),\"exists\":\(!node.isEmpty),\"total\":\(children.count),"
            + "\"value\":\(value),\"children\":[\(rows.joined(separator: ","))],\"more\":\(rank < children.count)}"
    }
}
