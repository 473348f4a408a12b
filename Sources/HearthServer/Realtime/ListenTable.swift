import HearthCore

/// A connection's listens (docs/protocol.md §2.4, §2.5): one per location and query tag, at most `limit`.
/// A value: it decides which listens are added, replaced, dropped or revoked; the session keeps the
/// namespace's ``FanOut`` in step with what it answers.
struct ListenTable {
    struct Key: Hashable {
        var path: Path
        var tag: Int64?
    }

    /// What the session keeps of one listen; its window and delivery live in the namespace's ``FanOut``.
    struct Listen {
        let path: Path
        let tag: Int64?
        let params: QueryParams?
        /// The query object exactly as the client sent it, for `c` (§3.3); tagged listens only.
        let queryJSON: [UInt8]?

        var key: Key { Key(path: path, tag: tag) }
    }

    enum Addition: Equatable {
        case added
        /// The same location and tag again: the new listen replaces the old one.
        case replaced
        /// Refused: the connection already holds `limit` listens.
        case overLimit
    }

    let limit: Int
    private(set) var listens: [Key: Listen] = [:]

    init(limit: Int) { self.limit = limit }

    var isEmpty: Bool { listens.isEmpty }
    var count: Int { listens.count }

    /// Whether a listen at `key` would be taken: it replaces one, or there is room.
    func admits(_ key: Key) -> Bool { listens[key] != nil || listens.count < limit }

    mutating func add(_ listen: Listen) -> Addition {
        if listens[listen.key] != nil {
            listens[listen.key] = listen
            return .replaced
        }
        guard listens.count < limit else { return .overLimit }
        listens[listen.key] = listen
        return .added
    }

    /// The listen removed (`n`), or nil when there was none.
    mutating func remove(_ key: Key) -> Listen? { listens.removeValue(forKey: key) }

    /// Every listen, removed (the connection closed).
    mutating func removeAll() -> [Listen] {
        defer { listens.removeAll() }
        return Array(listens.values)
    }

    /// Removes and returns the listens `mayRead` no longer allows (a new credential, new rules).
    mutating func removeUnreadable(_ mayRead: (Listen) -> Bool) -> [Listen] {
        let unreadable = listens.values.filter { !mayRead($0) }
        for listen in unreadable { listens[listen.key] = nil }
        return unreadable
    }
}
