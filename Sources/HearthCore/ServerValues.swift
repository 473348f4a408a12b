/// Resolves server-value placeholders in a write: `{".sv":"timestamp"}` and
/// `{".sv":{"increment":n}}` (docs/protocol.md §5.5).
///
/// The JSON reader leaves a placeholder in the tree as a node whose single child is `.sv`; a
/// placeholder priority (`".priority": {".sv": …}`) stays as a child keyed `.priority`, since a
/// `Priority` cannot hold it. Resolution runs when the server applies the write, before key
/// validation (which would reject `.sv`), and leaves a tree without either.
///
///     let write = Node([".sv": Node("timestamp")])
///     try ServerValues.resolve(write, at: "posts/1/at", in: root, now: 1_700_000_000_000)
///     // Node(Int64(1_700_000_000_000))
public enum ServerValues {
    /// The key that marks a placeholder.
    static let placeholderKey = ChildKey(".sv")
    /// The one operation of a complex placeholder, `{".sv": {"increment": n}}`.
    static let incrementKey = ChildKey("increment")
    /// The only simple placeholder.
    static let timestampName = "timestamp"
    /// Where an export-form value sits next to a placeholder priority (see `resolved`).
    static let valueKey = ChildKey(".value")

    /// True when `node` holds a `.sv` key anywhere, well formed or not, so that only writes with
    /// placeholders pay for `resolve` (which rejects the malformed ones).
    public static func containsPlaceholders(_ node: Node) -> Bool {
        guard node.hasChildren else { return false }
        let children = node.children
        if children[placeholderKey] != nil { return true }
        var found = false
        children.forEach { _, child in
            found = containsPlaceholders(child)
            return !found
        }
        return found
    }

    /// `value` with every placeholder replaced, for a write at `path`.
    ///
    /// `root` is the whole tree before the write: an increment adds to the number found at its own
    /// location there (missing or not a number: the result is the increment itself). A merge calls
    /// this once per key with the same pre-merge `root`, as §5.5 asks. Subtrees without
    /// placeholders are returned as they are, sharing storage with `value`.
    ///
    /// - Throws: `DataError(.invalidServerValue)` naming the location for a `.sv` that is not
    ///   `"timestamp"` or `{"increment": <number>}`, has siblings, or overflows a double.
    public static func resolve(_ value: Node, at path: Path, in root: Node, now: Int64) throws(DataError) -> Node {
        try resolved(value, at: path, in: root, now: now) ?? value
    }

    /// The resolved node, or nil when `node` holds no placeholder.
    static func resolved(_ node: Node, at path: Path, in root: Node, now: Int64) throws(DataError) -> Node? {
        guard node.hasChildren else { return nil }
        var children = node.children
        var priority = node.priority
        var changed = false

        // A placeholder priority. Other `.priority` children are not this function's business:
        // key validation rejects them.
        if let placeholder = children[.priorityKey], containsPlaceholders(placeholder) {
            let priorityPath = path.appending(.priorityKey)
            let value = try resolved(placeholder, at: priorityPath, in: root, now: now) ?? placeholder
            guard let resolvedPriority = Priority(value) else {
                throw DataError(.invalidServerValue, "Invalid server value at '\(priorityPath.slashed)': not a priority.")
            }
            priority = resolvedPriority
            children.removeValue(for: .priorityKey)
            changed = true
            // `{".value": v, ".priority": <placeholder>}` can only reach here in export form.
            if children.count == 1, let value = children[valueKey] {
                let inner = try resolved(value, at: path, in: root, now: now) ?? value
                return inner.withPriority(priority)
            }
        }

        if let content = children[placeholderKey] {
            guard children.count == 1 else {
                throw DataError(
                    .invalidServerValue, "Invalid server value at '\(path.slashed)': '.sv' must be the only key.")
            }
            return try value(of: content, at: path, in: root, now: now).withPriority(priority)
        }

        var replacements: [(ChildKey, Node)] = []
        var failure: DataError?
        children.forEach { key, child in
            do throws(DataError) {
                if let replacement = try resolved(child, at: path.appending(key), in: root, now: now) {
                    replacements.append((key, replacement))
                }
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        guard changed || !replacements.isEmpty else { return nil }
        for (key, replacement) in replacements {
            // An increment or timestamp never yields the empty node, but keep the map's invariant
            // (no empty children) without relying on that.
            if replacement.isEmpty { children.removeValue(for: key) } else { children[key] = replacement }
        }
        return Node(children: children).withPriority(priority)
    }

    /// The value a placeholder's `.sv` content stands for at `path`.
    static func value(of content: Node, at path: Path, in root: Node, now: Int64) throws(DataError) -> Node {
        if content.stringValue == timestampName {
            return Node(now)
        }
        let operation = content.children
        guard operation.count == 1, let delta = operation[incrementKey], delta.numberValue != nil else {
            throw DataError(
                .invalidServerValue,
                "Invalid server value at '\(path.slashed)': expected \"timestamp\" or {\"increment\": <number>}.")
        }
        let current = root.child(at: path)
        guard current.numberValue != nil else { return delta.withPriority(nil) }
        return try sum(current, delta, at: path)
    }

    /// `current + delta`. Two integers stay an integer unless the sum overflows 64 bits, then it
    /// is a double, as Android's `ServerValues` does; anything involving a double is a double.
    static func sum(_ current: Node, _ delta: Node, at path: Path) throws(DataError) -> Node {
        if case .integer(let a)? = current.leafValue, case .integer(let b)? = delta.leafValue {
            let (total, overflow) = a.addingReportingOverflow(b)
            if !overflow { return Node(total) }
        }
        let total = current.numberValue! + delta.numberValue!
        // JSON has no infinity, so a sum past the largest double cannot be stored or sent.
        guard total.isFinite else {
            throw DataError(.invalidServerValue, "Invalid server value at '\(path.slashed)': the increment overflows.")
        }
        return Node(total)
    }
}
