import Foundation
import HearthCore
import HearthStorage
import Testing

@testable import HearthSQLite

/// A full database (PRAGMA max_page_count, as a full disk looks to SQLite): the writer gets a clear
/// diskFull error, writes queued behind it fail too, readers never see them, nothing partial is stored,
/// and writing works again afterwards.
@Test func fullDatabaseFailsTheCommitWhole() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "full")
    let database = DurableDatabase(engine: engine, root: .empty)
    try await database.set("kept", to: Node("before"))
    try engine.executeOnWriter("PRAGMA max_page_count = 8")  // a few pages more than the file has

    // One multi-path update bigger than the room left, and a write queued right behind it.
    let big = String(repeating: "x", count: 1000)
    let values = (0..<200).map { (Path("many/k\($0)"), Node(big)) }
    func outcome(_ body: () async throws -> DurableDatabase.CommittedWrite) async -> Result<DurableDatabase.CommittedWrite, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
    async let failed = outcome { try await database.update("big", with: values) }
    async let behind = outcome { try await database.set("behind", to: Node(1)) }
    let (failedResult, behindResult) = await (failed, behind)
    guard case .failure(let failure as StorageError) = failedResult else {
        Issue.record("the write to a full database did not fail: \(failedResult)")
        return
    }
    #expect(failure.code == .diskFull && failure.message.contains(directory) && failure.message.contains("nothing from the failed write was stored"), "\(failure)")
    guard case .failure(let queued as StorageError) = behindResult else {
        Issue.record("the write queued behind the failure did not fail: \(behindResult)")
        return
    }
    #expect(queued.code == StorageError.Code.abortedAfterFailure || queued.code == StorageError.Code.diskFull)
    #expect(database.root.child(at: "big").isEmpty && database.root.child(at: "behind").isEmpty, "readers see a failed write")

    await database.waitForPendingWrites()
    try await database.set("after", to: Node(2))  // small: fits in the pages there are
    engine.close()
    let reopened = try SQLiteStorageEngine(directory: directory, namespace: "full")
    defer { reopened.close() }
    let loaded = try reopened.load(progress: nil)
    #expect(loaded == database.root)
    #expect(loaded.child(at: "big").isEmpty && loaded.child(at: "kept") == Node("before") && loaded.child(at: "after") == Node(2))
}

/// An engine dropped without close() ends its storage thread (and closes the file cleanly).
@Test func droppedEngineClosesItself() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    func threadCount() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0 }
    do {
        let engine = try SQLiteStorageEngine(directory: directory, namespace: "dropped")
        try engine.replaceAll(with: Node(["a": Node(1)]), progress: nil)
    }
    #expect(SQLiteStorageEngine.wasClosedCleanly(path: directory + "/dropped.sqlite"))
    let before = threadCount()
    for _ in 0..<20 { _ = try SQLiteStorageEngine(directory: directory, namespace: "dropped") }
    #expect(threadCount() <= before + 2, "storage threads leaked: \(before) -> \(threadCount())")
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "dropped")
    #expect(!engine.checkedIntegrity)
    #expect(try engine.load(progress: nil) == Node(["a": Node(1)]))
}

/// A generated export of a few MB: users with fields, priorities on leaves and inner nodes, `.value`,
/// arrays with holes, integer keys, non-ASCII text and escapes.
func generatedExport(users: Int) -> String {
    var json = "{\"users\":{"
    for i in 0..<users {
        if i > 0 { json += "," }
        json += "\"u\(i)\":{\".priority\":\(i % 7),\"name\":\"User \(i) \\\"q\\\" é🔥\",\"age\":{\".value\":\(i % 90),\".priority\":\"p\"},"
        json += "\"tags\":[\"a\",null,\"c\(i)\"],\"bio\":\"\(String(repeating: "lorem ipsum ", count: 20))\\n\",\"\(i % 10)\":true,\"n\":null}"
    }
    json += "},\"list\":[1,2.5,-3,true,false,{}],\"empty\":{},\".priority\":\"root\"}"
    return json
}

@Test func streamedImportMatchesTheWholeFileParser() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let json = generatedExport(users: 12_000)
    #expect(json.utf8.count > 4_000_000)
    let file = directory + "/export.json"
    try json.write(toFile: file, atomically: true, encoding: .utf8)
    let expected = try Array(json.utf8).withUnsafeBytes { try StorageJSON.read($0) }
    // Small whole-value limits walk the top levels key by key; the default parses users whole.
    for limit in [300, 64 << 10, 4 << 20] {
        let engine = try SQLiteStorageEngine(directory: directory, namespace: "imported")
        let descriptor = open(file, O_RDONLY)
        var reports = 0
        try engine.importJSON(from: descriptor, byteCount: json.utf8.count, wholeValueBytesMax: limit) { _ in reports += 1 }
        close(descriptor)
        #expect(reports >= 1)
        #expect(try engine.load(progress: nil) == expected, "whole-value limit \(limit)")
        engine.close()
    }
}

@Test func invalidImportStoresNothing() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let engine = try SQLiteStorageEngine(directory: directory, namespace: "bad")
    defer { engine.close() }
    try engine.replaceAll(with: Node(["old": Node(1)]), progress: nil)
    for (json, limit) in [(#"{"a":{"b":1},"c$":2}"#, 4), (#"{"a":{"b":1},"c":"#, 4), (#"{"a":1} x"#, 100), (#"{"a":{".value":1,"b":2}}"#, 100)] {
        let file = directory + "/bad.json"
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        let descriptor = open(file, O_RDONLY)
        defer { close(descriptor) }
        #expect(throws: StorageError.self, "\(json)") { try engine.importJSON(from: descriptor, wholeValueBytesMax: limit) }
        #expect(try engine.load(progress: nil) == Node(["old": Node(1)]), "\(json)")
    }
}
