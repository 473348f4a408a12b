import HearthCore

/// One page of a location's children for the console's tree view (`/console/api/children`): leaves
/// with their values, inner nodes with their number of children, never a whole subtree. A namespace
/// of a million leaves opens by reading 100 of them. Pure: reads a tree, returns JSON.
struct ConsoleTreePage {
    /// Children per page unless asked otherwise, and the most one page may hold.
    static let defaultLimit = 100
    static let maxLimit = 500
    /// Characters of a string value a page shows; longer ones are cut there and marked `truncated`
    /// with their size in UTF-8 bytes (the page reads the whole value over REST to edit it). A page of
    /// 500 leaves of 10 MB each would otherwise be 5 GB.
    static let previewCharacters = 1_000

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

    /// `"value":…` of a leaf, a long string cut to its first ``previewCharacters`` characters.
    static func preview(_ leaf: Node) -> String {
        guard let text = leaf.stringValue, text.utf8.count > previewCharacters else { return "\"value\":\(leaf.withPriority(nil).json())" }
        let shown = String(text.prefix(previewCharacters))
        guard shown.count < text.count else { return "\"value\":\(leaf.withPriority(nil).json())" }
        return "\"value\":\(Node(shown).json()),\"truncated\":true,\"bytes\":\(text.utf8.count)"
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
                rows.append("{\"key\":\(name),\"leaf\":true,\(Self.preview(child))}")
            }
            return true
        }
        let value = node.hasChildren || node.isEmpty ? "\"value\":null" : Self.preview(node)
        return "{\"path\":\(Node(path.slashed).json()),\"exists\":\(!node.isEmpty),\"total\":\(children.count),"
            + "\(value),\"children\":[\(rows.joined(separator: ","))],\"more\":\(rank < children.count)}"
    }
}
