import Dispatch
import HearthCore
import HearthSQLite
import HearthStorage
#if canImport(Glibc)
    import Glibc
#endif

extension Scenario {
    /// What the change feed costs durable writes: storage.write's workload (64 writers, 100-byte values,
    /// durable acks) with a feed entry on every write, as the server makes them, against the same writes
    /// without one, alternating in one invocation (docs/feed.md). Also what each write leaves on disk, with
    /// and without its entry (the namespace's file once closed, over the writes): the history's cost in
    /// bytes (issue 34).
    static let storageWriteFeed = Scenario(
        name: "storage.write.feed",
        summary: "storage.write with a change-feed entry on every write, against the same writes without, alternating"
    ) { context in
        let writers = FeedWorkload.writers, writesPerWriter = FeedWorkload.writesPerWriter, total = FeedWorkload.total
        let value = FeedWorkload.value
        var fileBytes: [Bool: [Int]] = [:]
        func run(feed: Bool) throws {
            StorageWorkload.removeDatabase("feed")
            let engine = try SQLiteStorageEngine(directory: StorageWorkload.directory, namespace: "feed")
            let database = DurableDatabase(engine: engine, root: .empty)
            let done = DispatchSemaphore(value: 0)
            @Sendable func write(_ writer: Int, _ index: Int) {
                guard index < writesPerWriter else {
                    done.signal()
                    return
                }
                let path = FeedWorkload.path(writer: writer, index: index)
                let note = feed ? FeedWorkload.note(writer: writer, path: path) : nil
                database.set(path, to: value, feed: note) { result in
                    if case .failure(let error) = result { fatalError("write failed: \(error)") }
                    write(writer, index + 1)
                }
            }
            for writer in 0..<writers { write(writer, 0) }
            for _ in 0..<writers { done.wait() }
            engine.close()
            // Closed, the file holds everything (the last connection checkpointed its write-ahead log).
            var status = stat()
            let file = StorageWorkload.directory + "/feed.sqlite"
            fileBytes[feed, default: []].append(stat(file, &status) == 0 ? Int(status.st_size) : 0)
        }
        let (withFeed, without) = try context.measureAlternating(
            "DurableDatabase+SQLite, feed", { try run(feed: true) }, against: "the same, no feed", { try run(feed: false) })
        StorageWorkload.removeDatabase("feed")
        func perWrite(_ sizes: [Int]?) -> Double { Double(sizes?.sorted()[(sizes?.count ?? 1) / 2] ?? 0) / Double(total) }
        print("   on disk: \(Int(perWrite(fileBytes[true]))) bytes a write with its entry, \(Int(perWrite(fileBytes[false]))) without")
        return BenchmarkResult(
            scenario: "storage.write.feed", metric: "acknowledged durable writes per second, each with a change-feed entry",
            value: Double(total) / withFeed.median.seconds, unit: "writes/s",
            reference: "the same writes without feed entries, alternating",
            referenceValue: Double(total) / without.median.seconds,
            extras: [("diskBytesPerWrite", perWrite(fileBytes[true])), ("referenceDiskBytesPerWrite", perWrite(fileBytes[false]))])
    }
}
