/// The location index's bounds, for every engine.
public enum FeedLocationLimits {
    /// How far behind the index may be for a history to wait while it catches up; further behind, the
    /// history reads the feed while the index is built in the background.
    public static let catchUpEntriesMax: Int64 = 50_000
    /// Index rows in a location's subtree beyond which its history reads the feed instead: changes there
    /// are then frequent enough that the newest entries hold them.
    public static let denseRows = 20_000
    /// Entries one step indexes at most (in whole feed rows): a few milliseconds of work.
    public static let entriesPerStep = 4_096
    /// Rows of entries retention removed that one step drops at most: an index left unused for longer
    /// than retention keeps can have millions, and one statement dropping them all would hold the
    /// storage thread (SQLite) or outlast a statement's deadline (PostgreSQL).
    public static let droppedRowsPerStep = 20_000

    /// The newest `limit` of `positions` (which may repeat: an entry can write at a location and above it).
    public static func newest(_ positions: [Int64], limit: Int) -> [Int64] {
        Array(Set(positions).sorted(by: >).prefix(limit))
    }
}
