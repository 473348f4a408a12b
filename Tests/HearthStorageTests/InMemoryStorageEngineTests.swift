import HearthCore
import HearthStorage
import HearthStorageTesting
import Testing

struct InMemoryFixture: StorageEngineFixture {
    let store = InMemoryStorageEngine.Store()
    func open() throws -> any StorageEngine { InMemoryStorageEngine(store: store) }
}

@Test("Storage engine conformance: in-memory", arguments: StorageEngineConformance.caseNames)
func inMemoryConformance(_ name: String) async throws {
    try await StorageEngineConformance.run(name, on: InMemoryFixture())
}

@Test func writeBatchForANewLeafIsOnePut() throws {
    var tree = DatabaseTree()
    try tree.set("users/ada/age", to: Node(36))
    let before = tree.root
    let changes = try tree.set("users/ada/name", to: Node("Ada"))
    let batch = WriteBatch(changes: changes, before: before, after: tree.root)
    #expect(batch.operations == [.put("users/ada/name", Node("Ada"))])
}

@Test func writeBatchRemovesALeafAncestor() throws {
    var tree = DatabaseTree()
    try tree.set("a", to: Node(1))
    let before = tree.root
    let changes = try tree.set("a/b", to: Node(2))
    let batch = WriteBatch(changes: changes, before: before, after: tree.root)
    #expect(batch.operations == [.removeRecord("a"), .put("a/b", Node(2))])
}

@Test func failedCommitAbortsWritesQueuedBehindIt() async throws {
    let store = InMemoryStorageEngine.Store()
    let engine = InMemoryStorageEngine(store: store)
    let database = DurableDatabase(engine: engine, root: .empty)
    try await database.set("counter", to: Node(1))
    store.injectFailures(1)
    // Two writes queued together: the second builds on the first, so it must fail with it.
    async let first: Void = { _ = try await database.set("counter", to: Node(2)) }()
    async let second: Void = { _ = try await database.set("other", to: Node(3)) }()
    var failures = 0
    do { try await first } catch { failures += 1 }
    do { try await second } catch { failures += 1 }
    #expect(failures >= 1)
    await database.waitForPendingWrites()
    #expect(database.root.child(at: "counter") == Node(1) || failures < 2)
    #expect(try engine.load(progress: nil) == database.root)
}

@Test func exportWritesFirebaseJSONWithPriorities() throws {
    let root = try Node(json: #"{"a": {".priority": 1, "b": "x"}, "c": [1, 2]}"#)
    var output: [UInt8] = []
    try StorageJSON.write(root, chunkByteCount: 4) { output += $0 }
    let text = String(decoding: output, as: UTF8.self)
    #expect(text.hasSuffix("}\n") && text.contains(#"".priority":1"#) && !text.contains("["))
    let back = try output.withUnsafeBytes { try StorageJSON.read($0) }
    #expect(back == root)
}
