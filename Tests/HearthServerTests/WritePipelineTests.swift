import HearthCore
import HearthProtocol
import HearthRules
import HearthStorage
import HearthTesting
import Synchronization
import Testing

@testable import HearthServer

/// An engine whose commits wait until the test releases them, in order.
final class GatedEngine: StorageEngine, @unchecked Sendable {
    private let held = Mutex<[@Sendable (Result<Void, StorageError>) -> Void]>([])
    var location: String { "gated" }
    func load(progress: ((LoadProgress) -> Void)?) throws(StorageError) -> Node { .empty }
    func append(_ batch: WriteBatch, completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        held.withLock { $0.append(completion) }
    }
    var heldCount: Int { held.withLock { $0.count } }
    /// Commits the oldest held batch.
    func releaseOne() {
        let next = held.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        next?(.success(()))
    }
    func replaceAll(with root: Node, progress: ((LoadProgress) -> Void)?) throws(StorageError) {}
    func compact() throws(StorageError) {}
    func backup(to path: String, progress: ((LoadProgress) -> Void)?) throws(StorageError) {}
    func close() {}
}

struct WritePipelineTests {
    static func server(_ engine: GatedEngine, executor: QueuedExecutor) -> DatabaseServer {
        let server = DatabaseServer(
            configuration: ServerConfiguration(emulator: true, adminToken: nil, defaultNamespace: "demo"),
            openEngine: { _ in engine })
        server.loopStarted(executor: executor)
        return server
    }

    static func put(_ server: DatabaseServer, _ path: String, _ body: String, headers: [String: String] = [:]) -> RecordingResponder {
        let responder = RecordingResponder()
        server.handle(HTTPRequest(method: .put, path: path, queryItems: [], headers: headers, body: Array(body.utf8)), responder: responder)
        return responder
    }

    @Test("REST: a stale if-match is answered 412 with the value only after the earlier write committed")
    func staleRESTWaitsForEarlierWrites() throws {
        let engine = GatedEngine()
        let executor = QueuedExecutor()
        let server = Self.server(engine, executor: executor)
        let first = Self.put(server, "/n.json", "1")
        let stale = Self.put(server, "/n.json", "2", headers: ["if-match": "null_etag"])
        executor.drain()
        #expect(first.response == nil && stale.response == nil)
        engine.releaseOne()  // the first write
        executor.drain()
        #expect(first.response?.status == 200)
        #expect(stale.response == nil)
        engine.releaseOne()  // the empty batch the stale answer waits for
        executor.drain()
        #expect(stale.response?.status == 412)
        #expect(stale.response?.bodyText == "1")
    }

    @Test("REST: a stale if-match from a caller who may write but not read is 401, not 412 with the value")
    func staleRESTForANonReaderIsPermissionDenied() throws {
        let engine = GatedEngine()
        let executor = QueuedExecutor()
        let server = Self.server(engine, executor: executor)
        let namespace = try server.open("demo")
        namespace.replaceRules(try RuleSet(source: #"{"rules":{"n":{".read":false,".write":true}}}"#), now: 0)
        let first = Self.put(server, "/n.json", "1")
        let stale = Self.put(server, "/n.json", "2", headers: ["if-match": "null_etag"])
        while engine.heldCount > 0 {
            engine.releaseOne()
            executor.drain()
        }
        executor.drain()
        #expect(first.response?.status == 200)
        #expect(stale.response?.status == 401)
        #expect(stale.response?.bodyText.contains("1") == false)
    }

    @Test("Realtime: datastale comes after the push of the write that made the hash stale")
    func datastaleAfterThePush() throws {
        let engine = GatedEngine()
        let executor = QueuedExecutor()
        let server = Self.server(engine, executor: executor)
        let sink = RecordingSink()
        let session = server.openRealtime(
            HTTPRequest(method: .get, path: "/.ws", queryItems: [("v", "5"), ("ns", "demo")], headers: ["host": "h"]), sink: sink)
        _ = sink.take()
        session.receive(frame: Array(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/n","h":""}}}"#.utf8))
        _ = sink.take()
        let first = Self.put(server, "/n.json", "1")
        session.receive(frame: Array(#"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/n","d":2,"h":""}}}"#.utf8))
        while engine.heldCount > 0 {
            engine.releaseOne()
            executor.drain()
        }
        #expect(first.response?.status == 200)
        #expect(sink.take() == [
            #"{"t":"d","d":{"a":"d","b":{"p":"n","d":1}}}"#,
            #"{"t":"d","d":{"r":2,"b":{"s":"datastale","d":"Transaction hash does not match"}}}"#,
        ])
    }
}

struct StorageFailureTests {
    @Test("REST: a failed commit is 500 with the storage message, as before (not 'storage: …')")
    func storageFailureKeepsItsRESTMessage() async throws {
        let store = InMemoryStorageEngine.Store()
        let executor = QueuedExecutor()
        let server = DatabaseServer(
            configuration: ServerConfiguration(emulator: true, adminToken: nil, defaultNamespace: "demo"),
            openEngine: { _ in InMemoryStorageEngine(store: store) })
        server.loopStarted(executor: executor)
        _ = try server.open("demo")
        store.injectFailures(1)
        let responder = RecordingResponder()
        server.handle(HTTPRequest(method: .put, path: "/n.json", queryItems: [], headers: [:], body: Array("1".utf8)), responder: responder)
        while responder.response == nil, executor.drainWhenQueued() > 0 {}
        let response = try #require(responder.response)
        #expect(response.status == 500)
        // 82d6808 answered RESTError(500, storageError.message).
        #expect(response.bodyText == #"{"error":"injected failure: the disk is full. Nothing from this write was stored."}"#)
    }
}
