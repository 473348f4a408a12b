/// How engines store a commit's change-feed entries: one row per commit (its number, an entry count and
/// one blob), the blob holding each entry's stored form (``ChangeFeedEntry``) after a 4-byte little-endian
/// length. One row per commit costs a commit one insert however many writes
/// it groups. SQLite's `feed` table and PostgreSQL's `hearth_feed` both hold these rows (docs/feed.md).
public enum ChangeFeedRows {
    /// Frames the feed entries of `batches`, in order, into rows of at most
    /// ``ChangeFeedPosition/entriesPerCommitMax`` entries, handing each to `row` with its entry count.
    /// `framed` is a buffer the caller keeps between commits. A plain loop over the slice: this runs on
    /// the storage thread, which every write waits for, and a lazy chain over a generic sequence looked its
    /// types up at run time on every commit.
    public static func frame(
        _ batches: ArraySlice<WriteBatch>, framed: inout [UInt8], row: (_ count: Int, _ bytes: [UInt8]) throws -> Void
    ) rethrows {
        var index = batches.startIndex
        while index < batches.endIndex {
            framed.removeAll(keepingCapacity: true)
            var count = 0
            while index < batches.endIndex, count < ChangeFeedPosition.entriesPerCommitMax {
                defer { index += 1 }
                guard let entry = batches[index].feed else { continue }
                let length = UInt32(entry.bytes.count)
                for shift in 0..<4 { framed.append(UInt8(truncatingIfNeeded: length >> (8 * shift))) }
                framed.append(contentsOf: entry.bytes)
                count += 1
            }
            if count > 0 { try row(count, framed) }
        }
    }

    /// Appends the entries of row `number` (holding `count` in `bytes`) whose positions come after
    /// `position`, as served JSON, until `entries` holds `limit`.
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) when the row or an entry does not decode.
    public static func read(
        row number: Int64, count: Int, bytes: UnsafeRawBufferPointer, after position: Int64, limit: Int,
        into entries: inout [ChangeFeedPage.Entry]
    ) throws(StorageError) {
        try forEach(row: number, count: count, bytes: bytes) { entryPosition, stored throws(StorageError) in
            guard entries.count < limit else { return false }
            if entryPosition > position {
                entries.append(.init(position: entryPosition, json: try ChangeFeedRecord.json(decoding: stored)))
            }
            return true
        }
    }

    /// Appends the entries of row `number` (holding `count` in `bytes`) whose positions are in `wanted`,
    /// as served JSON; the others are not decoded.
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) when the row or a wanted entry does not decode.
    public static func read(
        row number: Int64, count: Int, bytes: UnsafeRawBufferPointer, at wanted: Set<Int64>, into entries: inout [ChangeFeedPage.Entry]
    ) throws(StorageError) {
        try forEach(row: number, count: count, bytes: bytes) { entryPosition, stored throws(StorageError) in
            if wanted.contains(entryPosition) {
                entries.append(.init(position: entryPosition, json: try ChangeFeedRecord.json(decoding: stored)))
            }
            return true
        }
    }

    /// Calls `body` with each entry of row `number` (holding `count` in `bytes`): its position and its
    /// stored form, until `body` returns false.
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) when the row is cut short, or what `body` throws.
    public static func forEach(
        row number: Int64, count: Int, bytes: UnsafeRawBufferPointer,
        _ body: (_ position: Int64, _ stored: UnsafeRawBufferPointer) throws(StorageError) -> Bool
    ) throws(StorageError) {
        var offset = 0
        for index in 0..<count {
            guard offset + 4 <= bytes.count else { throw corrupt(number) }
            var length = 0
            for shift in 0..<4 { length |= Int(bytes[offset + shift]) << (8 * shift) }
            offset += 4
            guard length <= bytes.count - offset else { throw corrupt(number) }
            let stored = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
            guard try body(ChangeFeedPosition.of(commit: number, index: index), stored) else { return }
            offset += length
        }
    }

    private static func corrupt(_ number: Int64) -> StorageError {
        StorageError(.corrupt, "change-feed row \(number) is cut short.")
    }
}
