import Dispatch
public import HearthCore
import Synchronization

/// An engine's location index of its change feed, in the engine's own SQL: SQLite's and PostgreSQL's
/// ``FeedLocationIndex`` run these (docs/feed.md, "History of a location").
public protocol FeedLocationStore: Sendable {
    /// How many entries the feed holds after the last one indexed, counted up to about `atMost`.
    func entriesBehind(atMost: Int64) throws -> Int64
    /// Indexes the next entries (at most ``FeedLocationLimits/entriesPerStep``, in whole feed rows) and
    /// drops the rows of entries retention removed; whether entries are left.
    func step() throws -> Bool
    /// The positions of the indexed entries below `before` that wrote at `location`, below it or above
    /// it, newest first, at most `limit`; nil for the root, or a location whose subtree changes so often
    /// that reading the feed newest first finds its history sooner (``FeedLocationLimits/denseRows``).
    func candidates(of location: Path, before: Int64, limit: Int) throws -> FeedLocationCandidates?
}

/// Answers a history's question (which entries to read) from a ``FeedLocationStore`` once the index is
/// nearly caught up, and builds it in the background when it is far behind. Built lazily: nothing is
/// indexed until a history is asked for, so writes pay nothing for it.
public final class FeedLocationIndex<Store: FeedLocationStore>: Sendable {
    private let store: Store
    private let queue = DispatchQueue(label: "hearth.feed.locations")
    private let building = Mutex(false)
    private let builds = DispatchGroup()

    public init(_ store: Store) { self.store = store }

    public func candidates(
        of location: Path, before: Int64, limit: Int, completion: @escaping @Sendable (Result<FeedLocationCandidates?, StorageError>) -> Void
    ) {
        queue.async { [self] in
            do {
                if try store.entriesBehind(atMost: FeedLocationLimits.catchUpEntriesMax + 1) > FeedLocationLimits.catchUpEntriesMax {
                    build()
                    return completion(.success(nil))
                }
                while try store.step() {}
                completion(.success(try store.candidates(of: location, before: before, limit: limit)))
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
            // A failed step (the engine closing, a full disk, PostgreSQL gone) ends the build; the next
            // history starts another.
            while (try? store.step()) == true {}
        }
    }

    /// Waits for a background build to end (after the engine closed, its next step fails).
    public func waitForBuild() { builds.wait() }
}
