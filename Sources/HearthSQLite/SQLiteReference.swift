import HearthSQL
#if canImport(Glibc)
    import Glibc
#endif

/// Raw SQLite, for benchmarks: the same rows and transactions as Hearth's engine, with none of Hearth's
/// work (trees, batches, threads). `hearth-bench` measures it side by side with the engine, so this lives
/// here, where CSQLite may be imported.
public enum SQLiteReference {
    /// Inserts `rows` (path, text value) into a fresh Hearth-layout database at `path`, committing
    /// `groupSizes[i]` rows per transaction, with Hearth's pragmas (WAL, synchronous=FULL). Returns the
    /// seconds taken.
    public static func insert(rows: [(path: [UInt8], value: String)], groupSizes: [Int], path: String) throws -> Double {
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        let connection = try SQLiteConnection(path: path, create: true)
        defer { connection.close() }
        try SQLiteStorageEngine.configure(connection)
        try connection.execute(SQLiteSchema.create)
        let insert = try connection.prepare("INSERT OR REPLACE INTO nodes(path, value, priority) VALUES (?1, ?2, NULL)")
        let clock = ContinuousClock()
        let start = clock.now
        var index = 0
        var groups = groupSizes.makeIterator()
        while index < rows.count {
            let size = max(1, groups.next() ?? 100)
            try connection.execute("BEGIN IMMEDIATE")
            for row in rows[index..<min(rows.count, index + size)] {
                row.path.withUnsafeBufferPointer { insert.bind(1, text: $0) }
                insert.bind(2, text: row.value)
                try insert.run()
            }
            try connection.execute("COMMIT")
            index += size
        }
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Steps through every row of a Hearth database in path order, touching each column's bytes and
    /// building nothing: the floor for a load. Returns the rows read.
    public static func readAllRows(path: String) throws -> Int {
        let connection = try SQLiteConnection(path: path, create: false)
        defer { connection.close() }
        try SQLiteStorageEngine.configure(connection)
        let select = try connection.prepare("SELECT path, value, priority FROM nodes ORDER BY path")
        var rows = 0
        var checksum = 0
        while try select.step() {
            checksum &+= select.bytes(0).count &+ select.byteCount(1)
            _ = select.type(2)
            rows += 1
        }
        precondition(checksum != -1)
        return rows
    }

    /// An encoded path, as the engine stores it.
    public static func encodedPath(_ keys: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        for key in keys {
            bytes.append(contentsOf: key.utf8)
            bytes.append(SQLiteSchema.separator)
        }
        return bytes
    }
}
