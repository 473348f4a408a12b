import Foundation
import HearthCore
import HearthStorage
import HearthTesting
import Testing

@testable import HearthSQLite

/// A full database (PRAGMA max_page_count, as a full disk looks to SQLite): the writer gets a clear
/// diskFull error, writes built on it fail too, readers never see them, nothing partial is stored,
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
    // Appended in this order (the callback API, from one thread).
    typealias Outcome = Result<DurableDatabase.CommittedWrite, any Error>
    let (bigStream, bigContinuation) = AsyncStream<Outcome>.makeStream()
    let (behindStream, behindContinuation) = AsyncStream<Outcome>.makeStream()
    database.update("big", with: values) { bigContinuation.yield($0) }
    database.set("behind", to: Node(1)) { behindContinuation.yield($0) }
    var bigIterator = bigStream.makeAsyncIterator(), behindIterator = behindStream.makeAsyncIterator()
    let failed = await bigIterator.next()!
    let behind = await behindIterator.next()!
    let (failedResult, behindResult) = (failed, behind)
    guard case .failure(let failure as StorageError) = failedResult else {
        Issue.record("the write to a full database did not fail: \(failedResult)")
        return
    }
    #expect(failure.code == .diskFull && failure.message.contains(directory) && failure.message.contains("nothing from the failed write was stored"), "\(failure)")
    // "behind" fails when it was appended before the failure reached the database (it was built on
    // "big"); when the failure was handled first, it was built on the committed tree and may commit.
    let behindCommitted: Bool
    switch behindResult {
    case .success: behindCommitted = true
    case .failure(let error as StorageError):
        #expect(error.code == .abortedAfterFailure || error.code == .diskFull, "\(error)")
        behindCommitted = false
    case .failure(let error): Issue.record("unexpected \(error)"); return
    }
    #expect(database.root.child(at: "big").isEmpty, "readers see a failed write")
    #expect(database.root.child(at: "behind").isEmpty != behindCommitted)
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
    weak var thread: GroupCommitThread<SQLiteCommitter>?
    do {
        let engine = try SQLiteStorageEngine(directory: directory, namespace: "dropped")
        thread = engine.writer
        try engine.replaceAll(with: Node(["a": Node(1)]), progress: nil)
    }
    // The storage thread holds its state until it returns, a moment after deinit's close() saw it finish.
    let deadline = Date().addingTimeInterval(5)
    while thread != nil && Date() < deadline { usleep(1000) }
    #expect(thread == nil, "the storage thread of a dropped engine is still running")
    #expect(SQLiteStorageEngine.wasClosedCleanly(path: directory + "/dropped.sqlite"))
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

@Test func streamedImportMatchesTheWholeFileParser() async throws {
    // Seconds of blocking imports: on a thread of its own (see offThePool).
    try await offThePool {
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
