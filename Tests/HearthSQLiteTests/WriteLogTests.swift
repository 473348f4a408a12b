import Foundation
import HearthCore
import HearthSQLite
import HearthStorage
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
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "log")
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
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "fold")
    let database = DurableDatabase(engine: engine, root: .empty)
    for i in 0..<50 { try await database.set(Path("items/i\(i)"), to: Node(i)) }
    try await database.set("items/i7", to: .empty)
    engine.close()
    #expect(try rowCount("log", in: directory, namespace: "fold") == 0)
    #expect(try rowCount("nodes", in: directory, namespace: "fold") == 49)
    #expect(SQLiteStorageEngine.wasClosedCleanly(path: directory + "/fold.sqlite"))
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "fold")
    defer { reopened.close() }
    #expect(try reopened.load(progress: nil) == database.root)
}

@Test func aCommitThatFillsTheLogFoldsIt() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "full")
    defer { engine.close() }
    let database = DurableDatabase(engine: engine, root: .empty)
    let big = String(repeating: "x", count: 600_000)
    try await database.set("a", to: Node(big))
    #expect(try rowCount("log", in: directory, namespace: "full") == 1)
    // Together over the 1 MiB fold size: this commit writes both to the records and empties the log.
    try await database.set("b", to: Node(big))
    #expect(try rowCount("log", in: directory, namespace: "full") == 0)
    #expect(try rowCount("nodes", in: directory, namespace: "full") == 2)
    try await database.set("c", to: Node(1))
    #expect(try rowCount("log", in: directory, namespace: "full") == 1)
    #expect(try engine.load(progress: nil) == database.root)
}

@Test func aBackupTakenWithAnUnfoldedLogRestoresEveryWrite() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "live")
    defer { engine.close() }
    let database = DurableDatabase(engine: engine, root: .empty)
    for i in 0..<20 { try await database.set(Path("items/i\(i)"), to: Node("v\(i)")) }
    try engine.backup(to: directory + "/copy.sqlite", progress: nil)
    #expect(try rowCount("log", in: directory, namespace: "copy") > 0)
    // The copy is what a crash would leave: a log that was never folded. Opening it reads the log, and
    // its writer goes on from there.
    let copy = try SQLiteStorageEngine(directory: directory, namespace: "copy", create: false)
    let restored = DurableDatabase(engine: copy, root: try copy.load(progress: nil))
    #expect(restored.root == database.root)
    try await restored.set("items/i3", to: .empty)
    try await restored.set("extra", to: Node(true))
    copy.close()
    #expect(try rowCount("log", in: directory, namespace: "copy") == 0)
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "copy", create: false)
    defer { reopened.close() }
    #expect(try reopened.load(progress: nil) == restored.root)
}

@Test func aVersionOneFileGainsTheLogAndKeepsItsData() throws {
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
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "old", create: false)
    #expect(try engine.load(progress: nil) == Node(["a": Node("x")]))
    engine.close()
    let reopened = try SQLiteDatabase(path: directory + "/old.sqlite")
    defer { reopened.close() }
    #expect(try reopened.query("PRAGMA user_version")[0][0].integer == 2)
    #expect(try reopened.query("SELECT count(*) FROM log")[0][0].integer == 0)
}

@Test func anUndecodableLogRowIsReportedAsCorruptWithTheFile() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "bad")
    try await DurableDatabase(engine: engine, root: .empty).set("a", to: Node(1))
    engine.close()
    let file = try SQLiteDatabase(path: directory + "/bad.sqlite")
    try file.query("INSERT INTO log(operations) VALUES (?1)", [.blob([1, 3, 1, 200])])
    file.close()
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "bad")
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
    let server = try SQLiteStorageEngine(directory: directory, namespace: "live")
    let database = DurableDatabase(engine: server, root: .empty)
    for i in 0..<20 { try await database.set(Path("items/i\(i)"), to: Node(i)) }
    let exporter = try SQLiteStorageEngine(directory: directory, namespace: "live", create: false)
    #expect(try exporter.load(progress: nil) == database.root)
    exporter.close()
    #expect(try rowCount("log", in: directory, namespace: "live") == 0)
    // Later writes change what the folded batches wrote; the server's own fold must not replay those.
    for i in 0..<10 { try await database.set(Path("items/i\(i)"), to: Node("changed")) }
    try await database.set("items/i15", to: .empty)
    #expect(try server.load(progress: nil) == database.root)
    server.close()
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "live", create: false)
    defer { reopened.close() }
    #expect(try reopened.load(progress: nil) == database.root)
}
