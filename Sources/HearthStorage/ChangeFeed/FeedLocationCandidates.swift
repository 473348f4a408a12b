/// Which entries hold a location's history, as an engine with a location index answers it
/// (``StorageEngine/feedLocations(of:before:limit:completion:)``, docs/feed.md, "History of a location").
public struct FeedLocationCandidates: Sendable, Equatable {
    /// Positions, newest first, of the indexed entries that wrote at the location, below it or above it:
    /// at most the `limit` asked for, so as many means older ones may follow.
    public var positions: [Int64]
    /// The last position indexed: entries after it are not in `positions` and are read from the feed.
    public var indexedThrough: Int64

    public init(positions: [Int64], indexedThrough: Int64) {
        self.positions = positions
        self.indexedThrough = indexedThrough
    }
}
