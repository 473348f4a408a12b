import Dispatch
public import HearthCore
import Synchronization

/// An engine's location index of its change feed, in the engine's own SQL: SQLite's and PostgreSQL's
/// ``FeedLocationIndex`` run these (docs/feed.md, "History of a location").
public protocol FeedLocationStore: Sendable {
    /// Catches the index up and answers from it, unless it is more than `catchUpMax` entries behind
    /// (then nil, and the index is built in the background): the positions of the indexed entries below
    /// `before` that wrote at `location`, below it or above it, newest first, at most `limit`; nil
    /// candidates for the root, or a location whose subtree changes so often that reading the feed newest
    /// first finds its history sooner (``FeedLocationLimits/denseRows``).
    func find(of location: Path, before: Int64, limit: Int, catchUpMax: Int64) throws -> FeedLocationAnswer
    /// Indexes the next entries (at most ``FeedLocationLimits/entriesPerStep``, in whole feed rows) and
    /// drops the rows of entries retention removed; whether entries are left.
    func step() throws -> Bool
}

/// What a ``FeedLocationStore`` found.
public enum FeedLocationAnswer: Sendable {
    /// The index is caught up: its candidates (nil: read the feed instead).
    case caughtUp(FeedLocationCandidates?)
    /// More than the catch-up bound behind: build it in the background, read the feed meanwhile.
    case farBehind
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
                switch try store.find(of: location, before: before, limit: limit, catchUpMax: FeedLocationLimits.catchUpEntriesMax) {
                case .caughtUp(let candidates): completion(.success(candidates))
                case .farBehind:
                    build()
                    completion(.success(nil))
                }
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
