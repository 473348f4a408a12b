import Foundation
import HearthCore
import HearthWire
import HearthSQL

/// The disk cache of ``ClientPersistence`` on SQLite: one owner-only file per database under the user's
/// data directory, holding the writes not yet acknowledged (saved before they are applied locally) and
/// the server's data of each query listened to, with when it was last used.
///
/// Cached query data is written behind: changes are collected and written a quarter of a second later
/// in one transaction, so a busy listener does not rewrite its location on every push. Writes are saved
/// at once (a process killed right after `setValue` still has it on the next start).
final class SQLitePersistence: ClientPersistence, @unchecked Sendable {  // used on the repo's queue
    private let database: SQLiteDatabase
    let file: String
    private let cacheSizeBytes: UInt
    private var dirty: Set<QuerySpec> = []
    private var flushScheduled = false
    private var kept: Set<String> = []
    private weak var queue: DispatchQueue?
    private var latestTree: SyncTree?

    /// 1: writes, queries; 2: writes keep the ID the server knows them by (`wid`).
    static let schemaVersion: Int64 = 2

    private init(database: SQLiteDatabase, file: String, cacheSizeBytes: UInt) {
        self.database = database
        self.file = file
        self.cacheSizeBytes = cacheSizeBytes
    }

    /// The cache file of a database: its host and namespace, in characters any file system takes.
    static func file(for info: RepoInfo, in directory: String) -> String {
        let name = "\(info.host)_\(info.namespace)".map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" }
        return directory + "/" + String(name) + ".sqlite"
    }

    /// Opens (or creates) the database's cache file. A file that cannot be read as a cache is set aside
    /// (renamed `….corrupt-<time>`) with a warning and replaced by an empty one; nil, with a warning,
    /// when not even that works (the app then runs without persistence, never crashes).
    static func open(info: RepoInfo, cacheSizeBytes: UInt, directory: String = ClientFiles.directory) -> SQLitePersistence? {
        ClientFiles.prepare(directory)
        let path = file(for: info, in: directory)
        if let opened = try? openChecked(path, cacheSizeBytes: cacheSizeBytes) { return opened }
        let aside = path + ".corrupt-\(Int(Date().timeIntervalSince1970))"
        ClientLog.warning("the disk cache \(path) could not be read; it was moved to \(aside) and the app goes on with an empty cache")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix) }
        do { return try openChecked(path, cacheSizeBytes: cacheSizeBytes) } catch {
            ClientLog.warning("the disk cache \(path) could not be created (\(error)); persistence is off")
            return nil
        }
    }

    private static func openChecked(_ path: String, cacheSizeBytes: UInt) throws -> SQLitePersistence {
        _ = OwnerOnlyFiles.createFile(path)
        let database = try SQLiteDatabase(path: path)
        // A process killed is not a power cut: the OS keeps what was written, so the WAL need not be
        // synced at every write (which would cost an fsync per setValue).
        // A small page cache: the cache's rows are read once at start and written behind, so SQLite's
        // default of 2,000 pages would mostly hold copies of data the app already has in memory.
        try database.executeScript("""
            PRAGMA synchronous=NORMAL;
            PRAGMA cache_size=-64;
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS writes (
                id INTEGER PRIMARY KEY, path TEXT NOT NULL, merge INTEGER NOT NULL, data BLOB NOT NULL, wid TEXT);
            CREATE TABLE IF NOT EXISTS queries (
                spec TEXT PRIMARY KEY, path TEXT NOT NULL, query TEXT NOT NULL, last_use INTEGER NOT NULL,
                kept INTEGER NOT NULL, bytes INTEGER NOT NULL, data BLOB NOT NULL);
            CREATE INDEX IF NOT EXISTS queries_path ON queries(path);
            """)
        let version = try database.query("SELECT value FROM meta WHERE key = 'schema'").first?.first?.integer
        if let version, version > schemaVersion || version < 1 { throw UnknownLayout(version: version) }
        // A version-1 file's writes were saved without an ID: they are sent without one.
        if version == 1 { try database.query("ALTER TABLE writes ADD COLUMN wid TEXT") }
        try database.query("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?1)", [.integer(schemaVersion)])
        // Reading every row once checks the file is a database at all (SQLite opens garbage lazily).
        _ = try database.query("SELECT count(*) FROM writes")
        _ = try database.query("SELECT count(*) FROM queries")
        OwnerOnlyFiles.tighten(OwnerOnlyFiles.databaseFiles(path))
        let persistence = SQLitePersistence(database: database, file: path, cacheSizeBytes: cacheSizeBytes)
        for row in (try? database.query("SELECT spec FROM queries WHERE kept = 1")) ?? [] {
            if let spec = row.first?.text { persistence.kept.insert(spec) }
        }
        return persistence
    }

    func attach(queue: DispatchQueue) { self.queue = queue }

    /// A cache file written by another version of the SDK: set aside like a corrupt one.
    struct UnknownLayout: Error {
        let version: Int64
    }

    // MARK: Writes

    func loadWrites() -> [SavedWrite] {
        let rows = (try? database.query("SELECT id, path, merge, data, wid FROM writes ORDER BY id")) ?? []
        return rows.compactMap { row in
            guard row.count == 5, let id = row[0].integer, let path = row[1].text, let merge = row[2].integer,
                let data = row[3].blob
            else { return nil }
            let writeID = row[4].text
            if merge == 1 {
                guard let entries = JSONObjectSplitter.parse(data) else { return nil }
                return SavedWrite(id: id, writeID: writeID, path: Path(path), set: nil, merge: entries)
            }
            guard let node = try? Node(jsonBytes: data) else { return nil }
            return SavedWrite(id: id, writeID: writeID, path: Path(path), set: node, merge: nil)
        }
    }

    func saveWrite(id: Int64, writeID: String, path: Path, set: Node?, merge: [(Path, Node)]?) {
        let data: [UInt8]
        if let merge {
            data = ClientRequest.mergeJSON(merge)
        } else {
            var json: [UInt8] = []
            (set ?? .empty).appendJSON(to: &json, format: .export)
            data = json
        }
        do {
            try database.query(
                "INSERT OR REPLACE INTO writes (id, path, merge, data, wid) VALUES (?1, ?2, ?3, ?4, ?5)",
                [.integer(id), .text(path.description), .integer(merge == nil ? 0 : 1), .blob(data), .text(writeID)])
        } catch {
            ClientLog.warning("a write could not be saved to the disk cache: \(error)")
        }
    }

    func removeWrite(id: Int64) {
        _ = try? database.query("DELETE FROM writes WHERE id = ?1", [.integer(id)])
    }

    func renumberWrite(from old: Int64, to new: Int64) {
        guard old != new else { return }
        _ = try? database.query("UPDATE writes SET id = ?2 WHERE id = ?1", [.integer(old), .integer(new)])
    }

    func removeAllWrites() {
        _ = try? database.query("DELETE FROM writes")
    }

    // MARK: Query data

    /// The cached data of `spec`: its own entry, else what a cached location above it holds.
    func cachedValue(for spec: QuerySpec) -> Node? {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        if let row = try? database.query("SELECT data FROM queries WHERE spec = ?1", [.text(Self.key(spec))]).first,
            let data = row.first?.blob, let node = try? Node(jsonBytes: data)
        {
            _ = try? database.query("UPDATE queries SET last_use = ?2 WHERE spec = ?1", [.text(Self.key(spec)), .integer(now)])
            return node
        }
        var ancestor: Path? = spec.path
        while let path = ancestor {
            let defaultSpec = QuerySpec(path: path)
            if let row = try? database.query("SELECT data FROM queries WHERE spec = ?1", [.text(Self.key(defaultSpec))]).first,
                let data = row.first?.blob, let node = try? Node(jsonBytes: data)
            {
                let location = node.child(at: spec.path.relative(to: path) ?? .root)
                return spec.isDefault ? location : QueryWindow.node(of: location, params: spec.query.params)
            }
            ancestor = path.parent
        }
        return nil
    }

    func listenCompleted(key: ListenKey, query: WireQuery?, tree: SyncTree) {
        markDirty(QuerySpec(path: key.path, query: query ?? WireQuery()), tree: tree)
    }

    func serverDataChanged(at path: Path, tree: SyncTree) {
        for (key, query, _) in tree.activeListens {
            let spec = QuerySpec(path: key.path, query: query ?? WireQuery())
            if spec.path.overlaps(path) { markDirty(spec, tree: tree) }
        }
    }

    func setKeptSynced(_ spec: QuerySpec, _ kept: Bool) {
        let key = Self.key(spec)
        if kept { self.kept.insert(key) } else { self.kept.remove(key) }
        _ = try? database.query("UPDATE queries SET kept = ?2 WHERE spec = ?1", [.text(key), .integer(kept ? 1 : 0)])
    }

    private func markDirty(_ spec: QuerySpec, tree: SyncTree) {
        dirty.insert(spec)
        latestTree = tree
        guard !flushScheduled, let queue else {
            if queue == nil { flush() }
            return
        }
        flushScheduled = true
        queue.asyncAfter(deadline: .now() + 0.25) { [weak self] in self?.flush() }
    }

    /// Writes the dirty queries' data (those still complete) in one transaction, then prunes.
    func flush() {
        flushScheduled = false
        guard let tree = latestTree, !dirty.isEmpty else { return }
        // Holding the tree pins its nodes (the repo's next writes would copy their paths): let go now.
        latestTree = nil
        let specs = dirty
        dirty = []
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var rows: [(String, QuerySpec, [UInt8])] = []
        for spec in specs {
            guard let value = tree.completeValue(spec) else { continue }
            var json: [UInt8] = []
            value.appendJSON(to: &json, format: .export)
            rows.append((Self.key(spec), spec, json))
        }
        do {
            try database.transaction { run in
                for (key, spec, json) in rows {
                    _ = try run(
                        "INSERT OR REPLACE INTO queries (spec, path, query, last_use, kept, bytes, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                        [.text(key), .text(spec.path.description), .text(spec.query.identifier), .integer(now),
                         .integer(kept.contains(key) ? 1 : 0), .integer(Int64(json.count)), .blob(json)])
                }
            }
        } catch {
            ClientLog.warning("the disk cache could not be updated: \(error)")
        }
        prune(active: Set(tree.activeListens.map { Self.key(QuerySpec(path: $0.0.path, query: $0.1 ?? WireQuery())) }))
    }

    /// Over the size limit: the least recently used queries that are neither listened to now nor kept
    /// synced are dropped, oldest first, until the rest fits.
    private func prune(active: Set<String>) {
        guard let rows = try? database.query("SELECT spec, bytes, kept FROM queries ORDER BY last_use ASC") else { return }
        var total = rows.reduce(Int64(0)) { $0 + ($1[1].integer ?? 0) }
        guard total > Int64(cacheSizeBytes) else { return }
        for row in rows where total > Int64(cacheSizeBytes) {
            guard let key = row[0].text, row[2].integer != 1, !active.contains(key), !kept.contains(key) else { continue }
            _ = try? database.query("DELETE FROM queries WHERE spec = ?1", [.text(key)])
            total -= row[1].integer ?? 0
        }
    }

    /// The cached queries and their sizes (tests, diagnostics).
    var cachedQueries: [(spec: String, bytes: Int64)] {
        ((try? database.query("SELECT spec, bytes FROM queries ORDER BY spec")) ?? []).compactMap { row in
            guard let spec = row[0].text, let bytes = row[1].integer else { return nil }
            return (spec, bytes)
        }
    }

    static func key(_ spec: QuerySpec) -> String { spec.path.slashed + " " + spec.query.identifier }

    func close() {
        flush()
        database.close()
    }
}

extension JSONObjectSplitter {
    /// A merge's saved object back into relative paths and nodes.
    static func parse(_ bytes: [UInt8]) -> [(Path, Node)]? {
        guard let entries = split(bytes) else { return nil }
        var children: [(Path, Node)] = []
        for (key, value) in entries {
            guard let node = try? Node(jsonBytes: Array(value)) else { return nil }
            children.append((Path(key), node))
        }
        return children
    }
}
