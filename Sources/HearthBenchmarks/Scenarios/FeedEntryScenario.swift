import HearthCore
import HearthStorage

extension Scenario {
    /// What making a change-feed entry costs at the least: storage.write.feed's writes (new keys
    /// `bench/wN/kM`, 100-byte values, a signed-in writer over realtime), each entry made from its note and
    /// change set in a hot loop, against the write log's encoding of the same writes (which every durable
    /// write pays; a commit's 64 at a time), alternating. An entry's share of a durable write's time in
    /// storage.write.feed cannot fall below this loop's time per entry (docs/feed.md, the feed's cost).
    static let feedEntry = Scenario(
        name: "feed.entry",
        summary: "change-feed entries made in a hot loop, against the write log's encoding of the same writes"
    ) { context in
        let writers = FeedWorkload.writers, total = FeedWorkload.total, value = FeedWorkload.value
        let paths = (0..<total).map { FeedWorkload.path(writer: $0 % writers, index: $0 / writers) }
        let notes = paths.indices.map { FeedWorkload.note(writer: $0 % writers, path: paths[$0]) }
        let changes = paths.map { ChangeSet([ChangeSet.Change(path: $0, old: .empty, new: value)]) }
        // The log encodes a commit's batches together: groups of 64, as storage.write.feed's commits.
        let groups = stride(from: 0, to: total, by: writers).map { start in
            (start..<start + writers).map { WriteBatch(changes: changes[$0], before: .empty, after: Node.empty.setting(paths[$0], to: value)) }
        }
        let beforeBytesMax = ChangeFeedRetention.standard.beforeBytesMax
        var entryBytes = 0, logBytes = 0
        var encoded: [UInt8] = []
        let (entries, log) = context.measureAlternating(
            "entries made", {
                entryBytes = 0
                for index in 0..<total {
                    let entry = ChangeFeedEntry(note: notes[index], changes: changes[index], context: [], beforeBytesMax: beforeBytesMax)
                    entryBytes &+= entry.bytes.count
                }
            },
            against: "the log's encoding", {
                logBytes = 0
                for group in groups {
                    encoded.removeAll(keepingCapacity: true)
                    WriteBatch.encode(group, into: &encoded)
                    logBytes &+= encoded.count
                }
            })
        print("   \(entryBytes / total) bytes an entry, \(logBytes / total) bytes a write in the log")
        let nanoseconds = { (seconds: Double) in seconds * 1e9 / Double(total) }
        return BenchmarkResult(
            scenario: "feed.entry", metric: "time to make one change-feed entry (storage.write.feed's writes, hot loop)",
            value: nanoseconds(entries.median.seconds), unit: "ns",
            reference: "the write log's encoding of the same write (in groups of 64), alternating",
            referenceValue: nanoseconds(log.median.seconds))
    }
}
