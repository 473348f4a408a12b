public import HearthCore

/// The newest write IDs (HearthClient's `wid`) seen applied, at most `capacity` of them, oldest
/// forgotten first: a set with a memory bound. The server remembers its own applied writes in one
/// (`RememberedWrites`); a ``DurableDatabase`` that follows other servers remembers theirs in another.
///
///     var ids = RecentWriteIDs(capacity: 2)
///     ids.insert("a"); ids.insert("b"); ids.insert("c")
///     ids.contains("a")   // false: the oldest went
public struct RecentWriteIDs: Sendable {
    private var members: Set<String>
    /// `members` oldest first, from `oldest`, for forgetting the oldest past the capacity.
    private var order: [String]
    private var oldest = 0
    public let capacity: Int

    /// Holds `ids` (oldest first; only the newest `capacity` stay).
    public init(_ ids: [String] = [], capacity: Int = Limits.rememberedWriteIDsMax) {
        self.capacity = capacity
        order = Array(ids.suffix(capacity))
        members = Set(order)
    }

    public var count: Int { members.count }

    public func contains(_ id: String) -> Bool { members.contains(id) }

    /// Adds `id` as the newest, forgetting the oldest when past the capacity (an ID held already stays
    /// where it was).
    public mutating func insert(_ id: String) {
        guard members.insert(id).inserted else { return }
        order.append(id)
        guard members.count > capacity else { return }
        members.remove(order[oldest])
        oldest += 1
        // Dropped from the front in halves, not one at a time.
        if oldest * 2 > order.count {
            order.removeFirst(oldest)
            oldest = 0
        }
    }
}
