import Dispatch
import HearthCore
import HearthSQL
import HearthStorage
import Synchronization

/// An engine's side of ``FeedLocations``: answers a history's question (which entries to read) once the
/// index is nearly caught up, and builds it in the background when it is far behind. Index steps run
/// between commits on the storage thread (``GroupCommitThread/exclusive(_:)``), reads on the feed
/// reader's connection.
final class FeedLocationIndex: Sendable {
    /// How far behind the index may be for a history to wait while it catches up; further behind, the
    /// history reads the feed while the index is built in the background.
    static let catchUpEntriesMax: Int64 = 50_000

    private let writer: GroupCommitThread<SQLiteCommitter>
    private let reader: FeedReader
    private let queue = DispatchQueue(label: "hearth.feed.locations")
    private let building = Mutex(false)
    private let builds = DispatchGroup()

    init(writer: GroupCommitThread<SQLiteCommitter>, reader: FeedReader) {
        self.writer = writer
        self.reader = reader
    }

    func candidates(
        of location: Path, before: Int64, limit: Int, completion: @escaping @Sendable (Result<FeedLocationCandidates?, StorageError>) -> Void
    ) {
        queue.async { [self] in
            do {
                let behind = try reader.withConnection { connection in
                    try FeedLocations.entriesAfter(try FeedLocations.through(connection), connection, atMost: Self.catchUpEntriesMax + 1)
                }
                if behind > Self.catchUpEntriesMax {
                    build()
                    return completion(.success(nil))
                }
                while try step() {}
                let found = try reader.withConnection { connection -> FeedLocationCandidates? in
                    let through = try FeedLocations.through(connection)
                    let trimmed = try connection.integer("SELECT coalesce((SELECT through FROM feed_trimmed WHERE id = 1), 0)")
                    return try FeedLocations.candidates(connection, location: location, before: min(before, through + 1), trimmed: trimmed, limit: limit)
                        .map { FeedLocationCandidates(positions: $0, indexedThrough: through) }
                }
                completion(.success(found))
            } catch let error as StorageError {
                completion(.failure(error))
            } catch {
                completion(.failure(StorageError(.io, "the change feed's location index: \(error)")))
            }
        }
    }

    /// Builds the index to the feed's end in the background, once at a time.
    private func build() {
        let start = building.withLock { running in
            defer { running = true }
            return !running
        }
        guard start else { return }
        builds.enter()
        DispatchQueue.global(qos: .utility).async { [self] in
            defer {
                building.withLock { $0 = false }
                builds.leave()
            }
            // A failed step (the engine closing, a full disk) ends the build; the next history starts another.
            while (try? step()) == true {}
        }
    }

    /// One step between commits; whether entries are left.
    private func step() throws -> Bool {
        try writer.exclusive(folding: false) { connection in try FeedLocations.step(connection) }
    }

    /// Waits for a background build to end (after the writer closed, its next step fails).
    func waitForBuild() { builds.wait() }
}
