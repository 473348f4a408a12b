/// The rows of a change feed's location index (docs/feed.md, "History of a location") that a step makes
/// from feed rows: one `(path, position)` per location an entry wrote, the path keyed as records are
/// (``EncodedPath``), so that a location's subtree is one key range. SQLite's `feed_locations` and
/// PostgreSQL's `hearth_feed_locations` both hold them.
public struct FeedLocationRows {
    public private(set) var rows: [(path: [UInt8], position: Int64)] = []
    /// The last position taken: where the index ends once these rows are in.
    public private(set) var last: Int64
    private let after: Int64
    private var taken = 0

    /// Rows for the entries after `position` (the index's end, or what retention removed if later).
    public init(after position: Int64) {
        after = position
        last = position
    }

    /// Whether a step has taken its ``FeedLocationLimits/entriesPerStep``: the next feed row is left for
    /// the next step.
    public var isFull: Bool { taken >= FeedLocationLimits.entriesPerStep }

    /// Takes the entries of feed row `number` (holding `count` in `bytes`) after the starting position.
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) when the row or an entry does not decode.
    public mutating func take(row number: Int64, count: Int, bytes: UnsafeRawBufferPointer) throws(StorageError) {
        try ChangeFeedRows.forEach(row: number, count: count, bytes: bytes) { position, stored throws(StorageError) in
            guard position > after else { return true }
            for path in try ChangeFeedRecord.writtenPaths(decoding: stored) { rows.append((EncodedPath(path).bytes, position)) }
            last = position
            taken += 1
            return true
        }
    }

    /// In key order, so that neighbouring inserts share pages.
    public var sorted: [(path: [UInt8], position: Int64)] {
        rows.sorted { $0.path.lexicographicallyPrecedes($1.path) || ($0.path == $1.path && $0.position < $1.position) }
    }
}
