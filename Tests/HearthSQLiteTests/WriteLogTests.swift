import Foundation
import HearthCore
import HearthSQL
import HearthSQLite
import HearthStorage
import HearthSupport
import Testing

/// Rows in `table` of the namespace's file, read on a connection of the test's own.
private func rowCount(_ table: String, in directory: String, namespace: String) throws -> Int64 {
    let file = try SQLiteDatabase(path: "\(directory)/\(namespace).sqlite")
    defer { file.close() }
    return try file.query("SELECT count(*) FROM \(table)")[0][0].integer ?? -1
}

@Test func smallCommitsWaitInTheLogAndLoadAppliesThem() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "log", writeLog: .always)
    defer { engine.close() }
    let database = DurableDatabase(engine: engine, root: .empty)
    try await database.set("users/ada", to: Node(["name": Node("Ada"), "born": Node(1815)]))
    try await database.set("users/ada/name", to: .empty)
    try await database.set("rooms/r1", to: Node(["title": Node("Tea")]).withPriority(.number(2)))
    #expect(try rowCount("log", in: directory, namespace: "log") == 3)
    #expect(try rowCount("nodes", in: directory, namespace: "log") == 0)
    #expect(try engine.load(progress: nil) == database.root)
}

@Test func closingFoldsTheLogIntoTheRecords() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "fold", writeLog: .always)
    let database = DurableDatabase(engine: engine, root: .empty)
    for i in 0..<50 { try await database.set(Path("items/i\(i)"), to: Node(i)) }
    try await database.set("items/i7", to: .empty)
    engine.close()
    #expect(try rowCount("log", in: directory, namespace: "fold") == 0)
    #expect(try rowCount("nodes", in: directory, namespace: "fold") == 49)
    #expect(SQLiteStorageEngine.wasClosedCleanly(path: directory + "/fold.sqlite"))
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "fold", writeLog: .always)
    defer { reopened.close() }
    #expect(try reopened.load(progress: nil) == database.root)
}

@Test func aFullLogIsFoldedAChunkPerCommitAndALargeWriteGoesStraightToTheRecords() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    // Fold size 8,000 bytes: each commit past it folds at least 1,000 bytes (an eighth) of the oldest rows.
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "chunks", logFoldByteCount: 8_000, writeLog: .always)
    defer { engine.close() }
    let database = DurableDatabase(engine: engine, root: .empty)
    let text = String(repeating: "x", count: 400)  // ~420 bytes per logged write
    for i in 0..<19 { try await database.set(Path("items/i\(i)"), to: Node(text)) }
    #expect(try rowCount("log", in: directory, namespace: "chunks") == 19)
    #expect(try rowCount("nodes", in: directory, namespace: "chunks") == 0)
    try await database.set("items/i19", to: Node(text))  // the log reaches 8,000 bytes: the oldest 3 rows fold
    #expect(try rowCount("log", in: directory, namespace: "chunks") == 17)
    #expect(try rowCount("nodes", in: directory, namespace: "chunks") == 3)
    for i in 20..<60 { try await database.set(Path("items/i\(i)"), to: Node(text)) }
    let logged = try rowCount("log", in: directory, namespace: "chunks")
    #expect(logged >= 16 && logged <= 20)  // it stays about the fold size
    #expect(try rowCount("nodes", in: directory, namespace: "chunks") == 60 - logged)
    #expect(try engine.load(progress: nil) == database.root)
    // A write larger than the fold size is applied with the whole log, in its own commit.
    try await database.set("big", to: Node(String(repeating: "y", count: 10_000)))
    #expect(try rowCount("log", in: directory, namespace: "chunks") == 0)
    #expect(try rowCount("nodes", in: directory, namespace: "chunks") == 61)
    #expect(try engine.load(progress: nil) == database.root)
}

@Test func aBackupTakenWithAnUnfoldedLogRestoresEveryWrite() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "live", writeLog: .always)
    defer { engine.close() }
    let database = DurableDatabase(engine: engine, root: .empty)
    for i in 0..<20 { try await database.set(Path("items/i\(i)"), to: Node("v\(i)")) }
    try engine.backup(to: directory + "/copy.sqlite", progress: nil)
    #expect(try rowCount("log", in: directory, namespace: "copy") > 0)
    // The copy is what a crash would leave: a log that was never folded. Opening it reads the log, and
    // its writer goes on from there.
    let copy = try SQLiteStorageEngine(directory: directory, namespace: "copy", create: false, writeLog: .always)
    let restored = DurableDatabase(engine: copy, root: try copy.load(progress: nil))
    #expect(restored.root == database.root)
    try await restored.set("items/i3", to: .empty)
    try await restored.set("extra", to: Node(true))
    copy.close()
    #expect(try rowCount("log", in: directory, namespace: "copy") == 0)
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "copy", create: false, writeLog: .always)
    defer { reopened.close() }
    #expect(try reopened.load(progress: nil) == restored.root)
}

@Test func aVersionOneFileGainsTheLogAndTheFeedAndKeepsItsData() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let file = try SQLiteDatabase(path: directory + "/old.sqlite")
    try file.executeScript("""
        CREATE TABLE nodes(path TEXT PRIMARY KEY NOT NULL, value, priority) WITHOUT ROWID;
        INSERT INTO nodes VALUES ('a' || char(1), 'x', NULL);
        PRAGMA application_id = \(0x4872_7468);
        PRAGMA user_version = 1;
        """)
    file.close()
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "old", create: false, writeLog: .always)
    #expect(try engine.load(progress: nil) == Node(["a": Node("x")]))
    engine.close()
    let reopened = try SQLiteDatabase(path: directory + "/old.sqlite")
    defer { reopened.close() }
    #expect(try reopened.query("PRAGMA user_version")[0][0].integer == 4)
    #expect(try reopened.query("SELECT count(*) FROM log")[0][0].integer == 0)
    #expect(try reopened.query("SELECT count(*) FROM feed")[0][0].integer == 0)
}

@Test func anUndecodableLogRowIsReportedAsCorruptWithTheFile() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "bad", writeLog: .always)
    try await DurableDatabase(engine: engine, root: .empty).set("a", to: Node(1))
    engine.close()
    let file = try SQLiteDatabase(path: directory + "/bad.sqlite")
    try file.query("INSERT INTO log(operations) VALUES (?1)", [.blob([1, 3, 1, 200])])
    file.close()
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "bad", writeLog: .always)
    defer { reopened.close() }
    #expect {
        _ = try reopened.load(progress: nil)
    } throws: { error in
        guard let error = error as? StorageError else { return false }
        return error.code == .corrupt && error.message.contains("bad.sqlite")
    }
}

@Test func anotherEngineOnTheLiveFileFoldsTheLogOnlyOnce() async throws {
    // `hearth export` and `hearth backup` open their own engine on the file a running server writes; the
    // one that closes first folds the log, and neither may apply a batch twice or lose one.
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let server = try SQLiteStorageEngine(directory: directory, namespace: "live", writeLog: .always)
    let database = DurableDatabase(engine: server, root: .empty)
    for i in 0..<20 { try await database.set(Path("items/i\(i)"), to: Node(i)) }
    let exporter = try SQLiteStorageEngine(directory: directory, namespace: "live", create: false, writeLog: .always)
    #expect(try exporter.load(progress: nil) == database.root)
    exporter.close()
    #expect(try rowCount("log", in: directory, namespace: "live") == 0)
    // Later writes change what the folded batches wrote; the server's own fold must not replay those.
    for i in 0..<10 { try await database.set(Path("items/i\(i)"), to: Node("changed")) }
    try await database.set("items/i15", to: .empty)
    #expect(try server.load(progress: nil) == database.root)
    server.close()
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "live", create: false, writeLog: .always)
    defer { reopened.close() }
    #expect(try reopened.load(progress: nil) == database.root)
}

// MARK: - Found in review: what the log gives back must be exactly what the records would hold

@Test func replayingTheLogKeepsThePriorityOfANodeWhoseOnlyChildIsRewritten() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "prio", writeLog: .always)
    defer { engine.close() }
    let database = DurableDatabase(engine: engine, root: .empty)
    try await database.set("n", to: try Node(json: #"{".priority": 5, "c": 1}"#))
    try await database.set("n/c", to: Node(2))  // a removal and a put below the prioritized node
    try await database.set("users/ada", to: try Node(json: #"{".priority": 1, "name": "Ada"}"#))
    try await database.set("users/ada/name", to: Node("Ada L."))
    #expect(try rowCount("log", in: directory, namespace: "prio") > 0)
    let loaded = try engine.load(progress: nil)
    #expect(loaded.child(at: "n").priority == .number(5))
    #expect(loaded.child(at: "users/ada").priority == .number(1))
    #expect(exactlyEqual(loaded, database.root))
    // The root's own priority, when a leaf below it becomes an inner node.
    let other = try SQLiteStorageEngine(directory: directory, namespace: "root", writeLog: .always)
    defer { other.close() }
    let rootDatabase = DurableDatabase(engine: other, root: .empty)
    try await rootDatabase.set(.root, to: try Node(json: #"{".value": "v", ".priority": 7}"#))
    try await rootDatabase.set("b", to: Node(37.5))
    try await rootDatabase.set("b/1", to: Node(26))
    #expect(rootDatabase.root.priority == .number(7))
    #expect(exactlyEqual(try other.load(progress: nil), rootDatabase.root))
}

@Test func aDoubleBeyondTwoToThe53StaysADoubleThroughTheLog() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "double", writeLog: .always)
    let database = DurableDatabase(engine: engine, root: .empty)
    try await database.set("n", to: try Node(json: "1.5e18"))
    try await database.set("m", to: Node(Double(1 << 60)).withPriority(.number(1e300)))
    try await database.set("i", to: Node(Int64(1) << 60))
    let loaded = try engine.load(progress: nil)
    #expect(loaded.child(at: "n").leafValue == .double(1.5e18))
    #expect(loaded.child(at: "m").leafValue == .double(Double(1 << 60)))
    #expect(loaded.child(at: "i").leafValue == .integer(1 << 60))
    engine.close()  // folds: the records keep the types too
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "double", writeLog: .always)
    defer { reopened.close() }
    let folded = try reopened.load(progress: nil)
    #expect(folded.child(at: "n").leafValue == .double(1.5e18))
    #expect(folded.child(at: "i").leafValue == .integer(1 << 60))
}

@Test func anImportDiscardsTheLogEvenAnUndecodableRowOrOneAnotherEngineWrote() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let server = try SQLiteStorageEngine(directory: directory, namespace: "imp", writeLog: .always)
    let importer = try SQLiteStorageEngine(directory: directory, namespace: "imp", writeLog: .always)
    try await DurableDatabase(engine: server, root: .empty).set("old", to: Node("x"))
    let file = try SQLiteDatabase(path: directory + "/imp.sqlite")
    try file.query("INSERT INTO log(operations) VALUES (?1)", [.blob([1, 3, 1, 200])])
    file.close()
    try importer.replaceAll(with: Node(["new": Node(1)]), progress: nil)
    importer.close()
    server.close()
    let reader = try SQLiteStorageEngine(directory: directory, namespace: "imp", writeLog: .always)
    defer { reader.close() }
    #expect(try reader.load(progress: nil) == Node(["new": Node(1)]))
}

@Test func removingBelowALeafKeepsTheLeafAfterARestart() async throws {
    for foldBytes in [1, SQLiteStorageEngine.defaultLogFoldByteCount] {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = try SQLiteStorageEngine(directory: directory, namespace: "leaf", logFoldByteCount: foldBytes, writeLog: .always)
        let database = DurableDatabase(engine: engine, root: .empty)
        try await database.set("a", to: Node("x"))
        try await database.set("a/b", to: .empty)
        #expect(database.root == Node(["a": Node("x")]))
        #expect(try engine.load(progress: nil) == database.root)
        engine.close()
        let reopened = try SQLiteStorageEngine(directory: directory, namespace: "leaf", writeLog: .always)
        #expect(try reopened.load(progress: nil) == database.root)
        reopened.close()
    }
}

/// Random writes (sets, removals, priorities, leaves turning into objects and back, multi-path
/// updates) through an engine that logs and one that folds every commit: both must load exactly the
/// tree the database holds in memory, leaf types (integer or double) and priorities included.
@Test(arguments: [1, 2, 3, 4] as [UInt64])
func randomWritesLoadTheSameThroughTheLogAndTheRecords(seed: UInt64) async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    // Never folds while writing; folds a chunk every few commits; applies every commit to the records;
    // chooses as it goes (one write per commit here: it turns the log on after a window of commits, then
    // off again and drains it, so the switches run too); never logs.
    let names = ["logging", "chunked", "folding", "adaptive", "direct"]
    let engines = [
        try SQLiteStorageEngine(directory: directory, namespace: names[0], writeLog: .always),
        try SQLiteStorageEngine(directory: directory, namespace: names[1], logFoldByteCount: 3_000, writeLog: .always),
        try SQLiteStorageEngine(directory: directory, namespace: names[2], logFoldByteCount: 1, writeLog: .always),
        try SQLiteStorageEngine(directory: directory, namespace: names[3], logFoldByteCount: 3_000, writeLog: .adaptive),
        try SQLiteStorageEngine(directory: directory, namespace: names[4], writeLog: .never),
    ]
    let databases = engines.map { DurableDatabase(engine: $0, root: .empty) }
    var random = SplitMix64(seed: seed)
    let keys = ["a", "b", "c"]
    func path() -> Path {
        Path((0..<Int(1 + random.next() % 3)).map { _ in ChildKey(keys[Int(random.next() % 3)]) })
    }
    func value() -> Node {
        switch random.next() % 9 {
        case 0: return .empty
        case 1: return Node(Int64(random.next() % 100))
        case 2: return Node(Double(random.next() % 1000) / 8 + 0.5)
        case 3: return Node(1.5e18)
        case 4: return Node("s\(random.next() % 10)")
        case 5: return Node(random.next() % 2 == 0)
        case 6: return Node(["a": Node(1), "b": Node("x")]).withPriority(.number(Double(random.next() % 5)))
        case 7: return Node(["c": Node(["a": Node(true)]).withPriority(.string("p"))])
        default: return Node("leaf").withPriority(.string("q\(random.next() % 3)"))
        }
    }
    for _ in 0..<500 {
        let target = path()
        let choice = random.next() % 10
        let priority = random.next() % 3 == 0 ? Node.empty : Node(Int64(random.next() % 4))
        let first = value(), second = value()
        for database in databases {
            do {
                switch choice {
                case 0, 1: try await database.set(target.appending(".priority"), to: priority)
                case 2: try await database.update(target, with: [(Path("a"), first), (Path("b/c"), second)])
                default: try await database.set(target, to: first)
                }
            } catch is DataError {
                // Refused by the tree, on both.
            }
        }
    }
    #expect(databases.allSatisfy { exactlyEqual($0.root, databases[0].root) })
    for (database, engine) in zip(databases, engines) {
        let loaded = try engine.load(progress: nil)
        #expect(exactlyEqual(loaded, database.root), "\(loaded.json(.export)) != \(database.root.json(.export))")
        engine.close()
    }
    for (database, name) in zip(databases, names) {
        let reopened = try SQLiteStorageEngine(directory: directory, namespace: name, writeLog: .always)
        #expect(exactlyEqual(try reopened.load(progress: nil), database.root), "\(name) after a restart")
        reopened.close()
    }
}

/// Equal including each leaf's type (`Node ==` compares numbers as binary64) and every priority.
private func exactlyEqual(_ a: Node, _ b: Node) -> Bool {
    guard a.priority == b.priority, a.leafValue == b.leafValue, a.childCount == b.childCount else { return false }
    var equal = true
    a.children.forEach { key, child in
        equal = exactlyEqual(child, b.child(key))
        return equal
    }
    return equal
}

@Test func sequencesAreNeverReusedAfterTheLogIsEmptied() async throws {
    // The storage thread recognises its own rows by sequence: once another engine folded and deleted
    // them all, a new row must not get an old number back, or a later fold could apply stale batches.
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let server = try SQLiteStorageEngine(directory: directory, namespace: "seq", logFoldByteCount: 2_000, writeLog: .always)
    defer { server.close() }
    let database = DurableDatabase(engine: server, root: .empty)
    for i in 0..<5 { try await database.set(Path("a/k\(i)"), to: Node("first \(i)")) }
    let other = try SQLiteStorageEngine(directory: directory, namespace: "seq", create: false, writeLog: .always)
    other.close()  // folds the server's five rows and deletes them
    #expect(try rowCount("log", in: directory, namespace: "seq") == 0)
    for round in 0..<3 {
        for i in 0..<20 { try await database.set(Path("a/k\(i)"), to: Node("round \(round) \(i)")) }
    }
    #expect(try server.load(progress: nil) == database.root)
    let file = try SQLiteDatabase(path: directory + "/seq.sqlite")
    defer { file.close() }
    #expect(try file.query("SELECT coalesce(min(sequence), 99) FROM log")[0][0].integer ?? 0 > 5)
}

@Test func aFoldInTheCommitThatReusesASequenceDoesNotLoseThatCommit() async throws {
    // A layout-2 file made before AUTOINCREMENT: once another engine folded and deleted every row, the
    // next row gets sequence 1 again, while the server still remembers its own rows 1…19.
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let file = try SQLiteDatabase(path: directory + "/reuse.sqlite")
    try file.executeScript("""
        CREATE TABLE nodes(path TEXT PRIMARY KEY NOT NULL, value, priority) WITHOUT ROWID;
        CREATE TABLE log(sequence INTEGER PRIMARY KEY, operations BLOB NOT NULL);
        PRAGMA application_id = \(0x4872_7468);
        PRAGMA user_version = 2;
        """)
    file.close()
    let server = try SQLiteStorageEngine(directory: directory, namespace: "reuse", logFoldByteCount: 8_000, writeLog: .always)
    defer { server.close() }
    let database = DurableDatabase(engine: server, root: .empty)
    let text = String(repeating: "x", count: 400)  // 19 rows stay under 8,000 bytes
    for i in 0..<19 { try await database.set(Path("items/i\(i)"), to: Node(text)) }
    let exporter = try SQLiteStorageEngine(directory: directory, namespace: "reuse", create: false, writeLog: .always)
    exporter.close()  // folds and deletes rows 1…19
    try await database.set("fresh", to: Node(text))  // sequence 1 again, and this commit folds a chunk
    #expect(try server.load(progress: nil) == database.root)
    #expect(try server.load(progress: nil).child(at: "fresh") == Node(text))
}
