import Dispatch
import HearthCore

/// What the repo keeps on disk when persistence is on (``Database/isPersistenceEnabled``): writes not
/// yet acknowledged (saved before they are applied locally) and the server's data for the queries
/// listened to. Called on the repo's queue.
protocol ClientPersistence: AnyObject {
    /// The queue the repo runs on: delayed work (writing cached data behind) goes there.
    func attach(queue: DispatchQueue)
    /// Writes saved by an earlier run, oldest first.
    func loadWrites() -> [SavedWrite]
    /// Saves a write before it is applied; `writeID` is what the server knows it by, sent again with it.
    func saveWrite(id: Int64, writeID: String, path: Path, set: Node?, merge: [(Path, Node)]?)
    func removeWrite(id: Int64)
    func renumberWrite(from old: Int64, to new: Int64)
    func removeAllWrites()
    /// The cached server data for a query, if any.
    func cachedValue(for spec: QuerySpec) -> Node?
    /// A listen completed: its data is worth keeping.
    func listenCompleted(key: ListenKey, query: WireQuery?, tree: SyncTree)
    /// The server sent data at `path`.
    func serverDataChanged(at path: Path, tree: SyncTree)
    /// `keepSynced`: such queries are never pruned from the cache.
    func setKeptSynced(_ spec: QuerySpec, _ kept: Bool)
}

struct SavedWrite: Sendable {
    var id: Int64
    /// Nil for writes saved by a version that gave none.
    var writeID: String?
    var path: Path
    var set: Node?
    var merge: [(Path, Node)]?
}
