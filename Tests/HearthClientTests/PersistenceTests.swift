import Foundation
import HearthCore
import HearthSQL
import Synchronization
import Testing

@testable import HearthClient

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `hearth-client-probe` (Sources/HearthClientProbe) with a cache directory of its own.
final class Probe: @unchecked Sendable {
    let process = Process()
    private let output = TextBuffer()

    final class TextBuffer: Sendable {
        private let text = Mutex("")
        func append(_ more: String) { text.withLock { $0 += more } }
        var value: String { text.withLock { $0 } }
    }

    static var binary: String {
        URL(fileURLWithPath: TestServer.binary).deletingLastPathComponent().appendingPathComponent("hearth-client-probe").path
    }

    init(_ arguments: [String], cacheDirectory: String) throws {
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HEARTH_CLIENT_CACHE_DIR"] = cacheDirectory
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        pipe.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.append(String(decoding: data, as: UTF8.self))
        }
        try process.run()
    }

    var text: String { output.value }

    /// Waits up to `seconds` for a line containing `marker` (a bound for "never", as Recorder.wait's).
    func wait(for marker: String, seconds: Double = 120) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if text.contains(marker) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return text.contains(marker)
    }

    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func waitForExit(seconds: Double = 20) async {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill() }
    }
}

@Suite(.serialized) struct PersistenceTests {
    @Test func writesQueuedOfflineSurviveSIGKILLAndReachTheServerOnceInOrder() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let cache = NSTemporaryDirectory() + "hearth-client-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let url = server.databaseURL("offline-writes")
        let writer = try Probe(["write", url, "40"], cacheDirectory: cache)
        #expect(await writer.wait(for: "queued 40"))
        writer.kill()  // offline all along: nothing reached the server
        #expect(try server.rest("GET", "/count", namespace: "offline-writes").1 == "null")
        let syncer = try Probe(["sync", url], cacheDirectory: cache)
        #expect(await syncer.wait(for: "synced"), "\(syncer.text)")
        await syncer.waitForExit()
        // Every write once (a counter of increments), in order (the last value, and the server's
        // timestamps of each write never going back).
        #expect(try server.rest("GET", "/count", namespace: "offline-writes").1 == "40")
        #expect(try server.rest("GET", "/last", namespace: "offline-writes").1 == "39")
        let order = try Node(json: try server.rest("GET", "/order", namespace: "offline-writes").1)
        let times = (0..<40).compactMap { order.child(at: Path(String($0))).numberValue }
        #expect(times.count == 40)
        #expect(times == times.sorted())
        // The cache holds no write any more: a third run sends nothing again.
        let again = try Probe(["sync", url], cacheDirectory: cache)
        #expect(await again.wait(for: "synced"))
        await again.waitForExit()
        #expect(try server.rest("GET", "/count", namespace: "offline-writes").1 == "40")
    }

    @Test func cachedDataServesAListenerAtOnceWhenOffline() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let cache = NSTemporaryDirectory() + "hearth-client-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let url = server.databaseURL("cached")
        _ = try server.rest("PUT", "/posts", namespace: "cached", body: #"{"a":{"t":1},"b":{"t":2},"c":{"t":3}}"#)
        let online = try Probe(["cache", url, "posts"], cacheDirectory: cache)
        #expect(await online.wait(for: "cached 3"))
        await online.waitForExit()
        server.kill()  // nothing to ask any more
        let offline = try Probe(["offline", url, "posts"], cacheDirectory: cache)
        #expect(await offline.wait(for: "value 3 true"), "\(offline.text)")
        await offline.waitForExit()
    }

    @Test func aCorruptCacheFileIsSetAsideAndTheAppGoesOn() throws {
        let directory = NSTemporaryDirectory() + "hearth-client-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let info = try #require(RepoInfo(databaseURL: "http://127.0.0.1:1?ns=corrupt"))
        let file = SQLitePersistence.file(for: info, in: directory)
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: file))
        let persistence = try #require(SQLitePersistence.open(info: info, cacheSizeBytes: 1 << 20, directory: directory))
        #expect(persistence.loadWrites().isEmpty)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names.contains { $0.contains(".corrupt-") })
        // The new file works.
        persistence.saveWrite(id: 1, writeID: "run-1", path: Path("a"), set: Node(1), merge: nil)
        #expect(persistence.loadWrites().map(\.id) == [1])
        #expect(persistence.loadWrites().map(\.writeID) == ["run-1"])
        var status = stat()
        #expect(stat(file, &status) == 0 && status.st_mode & 0o077 == 0)
    }

    /// A cache written before writes had IDs keeps its writes: they are sent again without one.
    @Test func aVersionOneCacheKeepsItsWritesWithoutIDs() throws {
        let directory = NSTemporaryDirectory() + "hearth-client-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let info = try #require(RepoInfo(databaseURL: "http://127.0.0.1:1?ns=old"))
        do {
            let old = try SQLiteDatabase(path: SQLitePersistence.file(for: info, in: directory))
            try old.executeScript("""
                CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
                CREATE TABLE writes (id INTEGER PRIMARY KEY, path TEXT NOT NULL, merge INTEGER NOT NULL, data BLOB NOT NULL);
                INSERT INTO meta VALUES ('schema', 1);
                INSERT INTO writes VALUES (7, 'a/b', 0, CAST('{"x":1}' AS BLOB));
                """)
        }
        let persistence = try #require(SQLitePersistence.open(info: info, cacheSizeBytes: 1 << 20, directory: directory))
        let writes = persistence.loadWrites()
        #expect(writes.map(\.id) == [7])
        #expect(writes.first?.writeID == nil)
        #expect(writes.first?.set == Node(["x": Node(1)]))
        persistence.saveWrite(id: 8, writeID: "run-8", path: Path("c"), set: Node(true), merge: nil)
        #expect(persistence.loadWrites().map(\.writeID) == [nil, "run-8"])
    }

    @Test func theCacheIsPrunedToItsSizeLeastRecentlyUsedFirstButNeverKeptQueries() throws {
        let directory = NSTemporaryDirectory() + "hearth-client-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let info = try #require(RepoInfo(databaseURL: "http://127.0.0.1:1?ns=prune"))
        let persistence = try #require(SQLitePersistence.open(info: info, cacheSizeBytes: 1 << 20, directory: directory))
        var tree = SyncTree()
        let big = Node(String(repeating: "x", count: 300_000))
        for (index, name) in ["a", "b", "c", "d", "e"].enumerated() {
            let spec = QuerySpec(path: Path(name))
            _ = tree.addRegistration(RegistrationID(index + 1), spec: spec, type: .value)
            _ = tree.applyServerOverwrite(at: Path(name), big, tag: nil)
            _ = tree.listenComplete(ListenKey(path: Path(name), tag: nil))
            if name == "a" { persistence.setKeptSynced(spec, true) }
            persistence.listenCompleted(key: ListenKey(path: Path(name), tag: nil), query: nil, tree: tree)
            persistence.flush()
            // No longer listened to: eligible for pruning, unless kept synced.
            _ = tree.removeRegistration(RegistrationID(index + 1))
            if name == "a" { persistence.setKeptSynced(spec, true) }
            usleep(2_000)
        }
        let cached = Set(persistence.cachedQueries.map { $0.spec.split(separator: " ")[0] })
        // 5 × 300 kB against 1 MB: the oldest not kept (b, c) went; a stays (kept synced).
        #expect(cached.contains("/a"))
        #expect(!cached.contains("/b"))
        #expect(cached.contains("/e"))
        #expect(persistence.cachedQueries.reduce(0) { $0 + $1.bytes } <= 1 << 20)
    }
}
