import Foundation
import HearthCore
import HearthSQLite
import HearthStorage
import HearthStorageTesting
import Testing

/// A fresh data directory under /tmp, removed when the test process ends.
func temporaryDirectory(_ name: String = "hearth-sqlite") -> String {
    let path = NSTemporaryDirectory() + "\(name)-\(getpid())-\(UUID().uuidString.prefix(8))"
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

struct SQLiteFixture: StorageEngineFixture {
    let directory = temporaryDirectory()
    func open() throws -> any StorageEngine { try SQLiteStorageEngine(directory: directory, namespace: "test") }
}

@Test("Storage engine conformance: SQLite", arguments: StorageEngineConformance.caseNames)
func sqliteConformance(_ name: String) async throws {
    let fixture = SQLiteFixture()
    defer { try? FileManager.default.removeItem(atPath: fixture.directory) }
    try await StorageEngineConformance.run(name, on: fixture)
}

@Test func manyConcurrentWritesShareCommits() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "group")
    let database = DurableDatabase(engine: engine, root: .empty)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<16 {
            group.addTask {
                for i in 0..<50 { try await database.set(Path("w\(writer)/k\(i)"), to: Node(i)) }
            }
        }
        try await group.waitForAll()
    }
    engine.close()
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "group")
    defer { reopened.close() }
    let loaded = try reopened.load(progress: nil)
    #expect(loaded.leafCount == 800)
    #expect(loaded == database.root)
}

@Test func corruptedFileIsReportedWithItsNameAndWhatToDo() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "bad")
    try engine.replaceAll(with: Node(["a": Node(String(repeating: "x", count: 100_000))]), progress: nil)
    engine.close()
    // Overwrite pages in the middle of the file with garbage.
    let path = directory + "/bad.sqlite"
    let handle = FileHandle(forWritingAtPath: path)!
    handle.seek(toFileOffset: 4096)
    handle.write(Data(repeating: 0xA5, count: 3 * 4096))
    handle.closeFile()
    #expect {
        _ = try SQLiteStorageEngine(directory: directory, namespace: "bad").load(progress: nil)
    } throws: { error in
        guard let error = error as? StorageError else { return false }
        return error.code == .corrupt && error.message.contains(path) && error.message.contains("backup")
    }
}

@Test func garbageFileIsNotADatabase() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try Data(repeating: 0x42, count: 10_000).write(to: URL(fileURLWithPath: directory + "/junk.sqlite"))
    #expect(throws: StorageError.self) { _ = try SQLiteStorageEngine(directory: directory, namespace: "junk") }
}

@Test func missingAndReadOnlyDirectoriesSayWhatToDo() throws {
    #expect {
        _ = try SQLiteStorageEngine(directory: "/nonexistent/hearth-data", namespace: "x", create: false)
    } throws: { ($0 as? StorageError)?.code == .notFound && "\($0)".contains("/nonexistent/hearth-data") }
    #expect {
        _ = try SQLiteStorageEngine(directory: "/proc/hearth-data", namespace: "x")
    } throws: { error in
        guard let error = error as? StorageError else { return false }
        return error.message.contains("/proc/hearth-data")
    }
    #expect {
        _ = try SQLiteStorageEngine(directory: temporaryDirectory(), namespace: "../escape")
    } throws: { ($0 as? StorageError)?.code == .invalidData }
}

@Test func backupIsAConsistentCopy() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "main")
    let database = DurableDatabase(engine: engine, root: .empty)
    for i in 0..<200 { try await database.set(Path("items/i\(i)"), to: Node(i)) }
    try engine.backup(to: directory + "/copy.sqlite", progress: nil)
    let copy = try SQLiteStorageEngine(directory: directory, namespace: "copy", create: false)
    defer { copy.close() }
    #expect(try copy.load(progress: nil) == database.root)
    engine.close()
}

@Test func compactKeepsTheData() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "c")
    defer { engine.close() }
    let database = DurableDatabase(engine: engine, root: .empty)
    try await database.set("a", to: Node(["b": Node(1), "c": Node("x")]))
    try engine.compact()
    try await database.set("d", to: Node(2))
    #expect(try engine.load(progress: nil) == database.root)
}
