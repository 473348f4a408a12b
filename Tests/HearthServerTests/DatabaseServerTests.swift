import HearthTesting
import HearthProtocol
import Dispatch
import HearthCore
import HearthStorage
import Synchronization
import Testing

@testable import HearthServer

/// Runs work at once on the calling thread: the tests below are the loop. Storage commits when the
/// test says (``runCommits(_:)``), so a test steps the server instead of waiting for a thread.
func makeServer(
    emulator: Bool = true, adminToken: String? = nil, identity: (any IdentityService)? = nil, site: StaticSite? = nil
) -> DatabaseServer {
    let server = DatabaseServer(
        configuration: ServerConfiguration(emulator: emulator, adminToken: adminToken, defaultNamespace: "demo"),
        identity: identity, site: site, openEngine: { _ in InMemoryStorageEngine(commits: .whenTold) })
    server.loopStarted(executor: ImmediateExecutor())
    return server
}

/// Sends one request and waits (in-memory commits complete on another thread) for the answer.
func send(
    _ server: DatabaseServer, _ method: HTTPRequest.Method, _ url: String, body: String? = nil,
    headers: [String: String] = [:]
) async throws -> HTTPResponse {
    let parts = url.split(separator: "?", maxSplits: 1)
    let items: [(name: String, value: String)] = parts.count > 1
        ? parts[1].split(separator: "&").map {
            let pair = $0.split(separator: "=", maxSplits: 1)
            return (String(pair[0]), pair.count > 1 ? String(pair[1]) : "")
        } : []
    let responder = RecordingResponder()
    server.handle(
        HTTPRequest(method: method, path: String(parts[0]), queryItems: items, headers: headers,
                    body: Array((body ?? "").utf8)),
        responder: responder)
    // Commits (with what their completions queue) run until the answer is there; an answer that comes
    // from another queue (Auth's, a big namespace's load) is waited for.
    while responder.response == nil, runCommits(server) > 0 {}
    return try #require(responder.waitForResponse(seconds: 10), "no answer to \(method) \(url)")
}

/// Runs the commits the server's in-memory engines were told to wait with (`.whenTold`); how many ran.
@discardableResult
func runCommits(_ server: DatabaseServer) -> Int {
    server.namespaces.all.reduce(0) { ran, namespace in
        ran + ((namespace.database.engine as? InMemoryStorageEngine)?.runQueuedCommits() ?? 0)
    }
}

@Test func putThenGetRoundTripsAndSilentIs204() async throws {
    let server = makeServer()
    let put = try await send(server, .put, "/a/b.json", body: #"{"x":1,"y":[true]}"#)
    #expect(put.status == 200)
    #expect(put.bodyText == #"{"x":1,"y":[true]}"#)
    #expect(try await send(server, .get, "/a.json").bodyText == #"{"b":{"x":1,"y":[true]}}"#)
    let silent = try await send(server, .put, "/a/c.json?print=silent", body: "2")
    #expect(silent.status == 204)
    #expect(silent.body.isEmpty)
    #expect(silent.header("access-control-allow-origin") == "*")
    #expect(silent.header("x-content-type-options") == "nosniff")
}

@Test func postReturnsAPushIDAndPatchUpdatesManyPaths() async throws {
    let server = makeServer()
    let post = try await send(server, .post, "/list.json", body: #""hi""#)
    let name = try #require(try Node(json: post.bodyText).child(ChildKey("name")).stringValue)
    #expect(name.count == 20)
    _ = try await send(server, .put, "/obj.json", body: #"{"a":1,"temp":2}"#)
    let patch = try await send(server, .patch, "/obj.json", body: #"{"b":"three","c/d":true,"temp":null}"#)
    #expect(patch.status == 200)
    #expect(try await send(server, .get, "/obj.json").bodyText == #"{"a":1,"b":"three","c":{"d":true}}"#)
    let override = try await send(server, .post, "/obj/a.json", body: "5", headers: ["x-http-method-override": "PUT"])
    #expect(override.bodyText == "5")
}

@Test func etagsGuardWrites() async throws {
    let server = makeServer()
    let absent = try await send(server, .get, "/n.json", headers: ["x-firebase-etag": "true"])
    #expect(absent.header("etag") == "null_etag")
    let created = try await send(server, .put, "/n.json", body: "1", headers: ["if-match": "null_etag"])
    #expect(created.status == 200)
    let tag = try #require(created.header("etag"))
    #expect(tag == Node(1).hash)
    let stale = try await send(server, .put, "/n.json", body: "2", headers: ["if-match": "null_etag"])
    #expect(stale.status == 412)
    #expect(stale.bodyText == "1")
    #expect(stale.header("etag") == tag)
    let unchanged = try await send(server, .get, "/n.json", headers: ["if-none-match": tag])
    #expect(unchanged.status == 304)
}

@Test func queriesReturnTheWindow() async throws {
    let server = makeServer()
    _ = try await send(server, .put, "/s.json", body: #"{"a":{"h":3},"b":{"h":1},"c":{"h":2},"d":{"h":5}}"#)
    let window = try await send(server, .get, #"/s.json?orderBy="h"&startAt=2&limitToFirst=2"#)
    #expect(window.bodyText == #"{"a":{"h":3},"c":{"h":2}}"#)
    let keys = try await send(server, .get, #"/s.json?orderBy="$key"&limitToLast=1"#)
    #expect(keys.bodyText == #"{"d":{"h":5}}"#)
    let shallow = try await send(server, .get, "/s.json?shallow=true")
    #expect(shallow.bodyText == #"{"a":true,"b":true,"c":true,"d":true}"#)
    // Primitive children keep their values; only objects become true.
    _ = try await send(server, .put, "/m.json", body: #"{"a":{"deep":1},"b":2,"c":"s","d":false}"#)
    #expect(try await send(server, .get, "/m.json?shallow=true").bodyText == #"{"a":true,"b":2,"c":"s","d":false}"#)
}

@Test("Errors are Firebase-shaped", arguments: [
    (HTTPRequest.Method.put, "/x.json", "{bad", 400), (.put, "/x.json", "", 400), (.patch, "/x.json", "[1]", 400),
    (.put, "/x.json", #"{"a.b":1}"#, 400), (.put, "/x.json", #"{".sv":"nope"}"#, 400), (.get, "/x", "", 404),
    (.get, "/x.json?orderBy=nope", "", 400),
])
func errorsAreFirebaseShaped(method: HTTPRequest.Method, url: String, body: String, status: Int) async throws {
    let response = try await send(makeServer(), method, url, body: body)
    #expect(response.status == status)
    #expect(try Node(json: response.bodyText).child(ChildKey("error")).stringValue != nil)
}

@Test func withoutEmulatorOnlyTheAdminTokenMayReadAndWrite() async throws {
    let server = makeServer(emulator: false, adminToken: "secret")
    // A namespace nobody created: strangers cannot make the server create it by naming it.
    let unknown = try await send(server, .get, "/x.json")
    #expect(unknown.status == 404)
    #expect(unknown.bodyText.contains("Please ensure that you spelled the name of your Firebase correctly"))
    #expect(try await send(server, .get, "/.inspect/databases.json").status == 401)
    #expect(try await send(server, .get, "/x.json?auth=secret").status == 200)  // the admin creates it
    let anonymous = try await send(server, .get, "/x.json")
    #expect(anonymous.status == 401)
    #expect(anonymous.bodyText == #"{"error":"Permission denied"}"#)
    #expect(try await send(server, .get, "/x.json", headers: ["authorization": "Bearer owner"]).status == 401)
    #expect(try await send(server, .get, "/x.json", headers: ["authorization": "Bearer secret"]).status == 200)
    #expect(try await send(server, .get, "/x.json?auth=secret").status == 200)
    #expect(try await send(server, .get, #"/x.json?auth=secret&auth_variable_override={"uid":"u"}"#).status == 401)
}

@Test func rulesAreStoredAndReadBack() async throws {
    let server = makeServer()
    let source = "{\n  // comment\n  \"rules\": {\".read\": true}\n}"
    let owner = ["authorization": "Bearer owner"]
    #expect(try await send(server, .put, "/.settings/rules.json", body: source, headers: owner).status == 200)
    #expect(try await send(server, .get, "/.settings/rules.json", headers: owner).bodyText == source)
    #expect(try await send(server, .get, "/.settings/rules.json?format=strict", headers: owner).bodyText == #"{"rules":{".read":true}}"#)
    #expect(try await send(server, .put, "/.settings/rules.json", body: "{}", headers: owner).status == 400)
    // Without a credential, or with a user's ID token, nobody manages the rules, even in emulator mode; any
    // other bearer (firebase-admin for Node sends its OAuth token to the emulator) may.
    #expect(try await send(server, .get, "/.settings/rules.json").status == 401)
    let userToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1In0."
    #expect(try await send(server, .get, "/.settings/rules.json", headers: ["authorization": "Bearer \(userToken)"]).status == 401)
    #expect(try await send(server, .get, "/.settings/rules.json", headers: ["authorization": "Bearer ya29.oauth"]).status == 200)
}

@Test func streamsSendTheInitialPutThenOneEventPerWrite() async throws {
    let server = makeServer()
    _ = try await send(server, .put, "/room/a.json", body: "1")
    let stream = RecordingResponder()
    server.handle(HTTPRequest(method: .get, path: "/room.json", headers: ["accept": "text/event-stream"]), responder: stream)
    #expect(stream.streamStatus == 200)
    _ = try await send(server, .put, "/room/b.json", body: #""x""#)
    _ = try await send(server, .patch, "/room.json", body: #"{"c/d":2}"#)
    _ = try await send(server, .put, "/.json", body: #"{"room":{"z":0}}"#)
    _ = try await send(server, .put, "/elsewhere.json", body: "3")
    #expect(stream.text == """
        event: put
        data: {"path":"/","data":{"a":1}}

        event: put
        data: {"path":"/b","data":"x"}

        event: patch
        data: {"path":"/","data":{"c/d":2}}

        event: put
        data: {"path":"/","data":{"z":0}}


        """)
}

@Test func aStreamOverItsBudgetIsDroppedAtOnceNotCancelledBehindItsBacklog() async throws {
    let server = makeServer()
    let stream = RecordingResponder()
    stream.limit = 100
    server.handle(HTTPRequest(method: .get, path: "/r.json", headers: ["accept": "text/event-stream"]), responder: stream)
    // Under the budget, one event is queued whole however large it is.
    _ = try await send(server, .put, "/r.json", body: "\"\(String(repeating: "x", count: 200))\"")
    #expect(!stream.aborted)
    // Now over it: the next event is refused and the connection dropped, with no `cancel` queued
    // behind a backlog the reader is not taking.
    _ = try await send(server, .put, "/r.json", body: "1")
    #expect(stream.aborted)
    #expect(!stream.text.contains("event: cancel"))
    let held = stream.streamed.count
    _ = try await send(server, .put, "/r.json", body: "2")
    #expect(stream.streamed.count == held)  // forgotten by the namespace
}

@Test func queryStreamsSendTheirWindowAndItAgainWhenAWriteChangesIt() async throws {
    let server = makeServer()
    _ = try await send(server, .put, "/scores.json", body: #"{"a":{"s":1},"b":{"s":5},"c":{"s":3}}"#)
    let stream = RecordingResponder()
    server.handle(
        HTTPRequest(method: .get, path: "/scores.json", queryItems: [("orderBy", #""s""#), ("limitToLast", "2")],
                    headers: ["accept": "text/event-stream"]),
        responder: stream)
    #expect(stream.streamStatus == 200)
    _ = try await send(server, .put, "/scores/a/s.json", body: "0")  // outside the window: no event
    _ = try await send(server, .put, "/scores/d.json", body: #"{"s":9}"#)  // enters, c leaves
    #expect(stream.text == """
        event: put
        data: {"path":"/","data":{"b":{"s":5},"c":{"s":3}}}

        event: put
        data: {"path":"/","data":{"b":{"s":5},"d":{"s":9}}}


        """)
}

/// An engine whose load waits until the test lets it go: a big namespace being read from disk.
final class SlowLoadingEngine: StorageEngine, @unchecked Sendable {
    let inner = InMemoryStorageEngine()
    let released = DispatchSemaphore(value: 0)
    var location: String { "slow" }
    func load(progress: ((LoadProgress) -> Void)?) throws(StorageError) -> Node {
        released.wait()
        return try inner.load(progress: progress)
    }
    func append(_ batch: WriteBatch, completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        inner.append(batch, completion: completion)
    }
    func replaceAll(with root: Node, progress: ((LoadProgress) -> Void)?) throws(StorageError) {
        try inner.replaceAll(with: root, progress: progress)
    }
    func compact() throws(StorageError) { try inner.compact() }
    func backup(to path: String, progress: ((LoadProgress) -> Void)?) throws(StorageError) {
        try inner.backup(to: path, progress: progress)
    }
    func close() { inner.close() }
}

@Test func aBigNamespaceLoadsOffTheLoopWhileOthersAreServed() async throws {
    let slow = SlowLoadingEngine()
    let server = DatabaseServer(
        configuration: ServerConfiguration(emulator: true, adminToken: nil, defaultNamespace: "demo"),
        files: NamespaceFiles(bytes: { $0 == "big" ? 1 << 30 : 0 }, names: { [] }, delete: { _ in }),
        openEngine: { $0 == "big" ? slow as any StorageEngine : InMemoryStorageEngine() })
    server.loopStarted(executor: ImmediateExecutor())
    let waiting = RecordingResponder()
    server.handle(HTTPRequest(method: .get, path: "/x.json", queryItems: [("ns", "big")]), responder: waiting)
    // The loop is free: another namespace answers while "big" is still loading.
    #expect(try await send(server, .put, "/y.json?ns=small", body: "1").status == 200)
    #expect(waiting.response == nil)
    slow.released.signal()
    let loaded = waiting.waitForResponse(seconds: 10)
    #expect(loaded?.status == 200)
    #expect(loaded?.bodyText == "null")
}

@Test func theNodeNameIsReadableByAnyoneAndNothingElseIsThere() async throws {
    let server = DatabaseServer(
        configuration: ServerConfiguration(emulator: false, adminToken: "secret", defaultNamespace: "x", node: "node-b"),
        openEngine: { _ in InMemoryStorageEngine() })
    let node = try await send(server, .get, "/.info/node.json")
    #expect(node.status == 200 && node.bodyText == #""node-b""#)
    #expect(try await send(server, .get, "/.info.json").bodyText == #"{"node":"node-b"}"#)
    #expect(try await send(server, .put, "/.info/node.json", body: "1").status == 404)
    #expect(try await send(server, .get, "/.info/connected.json").status == 404)
}

/// A realtime client that sends more requests than a connection may keep while its namespace loads is
/// disconnected (its SDK reconnects and sends them again), not left waiting for answers that never come;
/// up to the bound, every request is answered once the namespace is there.
@Test func requestsBeyondTheBoundWhileLoadingCloseTheConnection() async throws {
    let slow = SlowLoadingEngine()
    let executor = QueuedExecutor()
    let server = DatabaseServer(
        configuration: ServerConfiguration(emulator: true, adminToken: nil, defaultNamespace: "demo"),
        files: NamespaceFiles(bytes: { $0 == "big" ? 1 << 30 : 0 }, names: { [] }, delete: { _ in }),
        openEngine: { $0 == "big" ? slow as any StorageEngine : InMemoryStorageEngine() })
    server.loopStarted(executor: executor)
    func connect() -> (RealtimeSessionHandle, FrameRecorder) {
        let sink = FrameRecorder()
        let session = server.openRealtime(
            HTTPRequest(method: .get, path: "/.ws", queryItems: [("v", "5"), ("ns", "big")], headers: ["host": "h"]), sink: sink)
        return (session, sink)
    }
    let (patient, patientSink) = connect()
    let (flooding, floodingSink) = connect()
    for request in 1...3 {
        patient.receive(frame: Array(#"{"t":"d","d":{"r":\#(request),"a":"q","b":{"p":"/p\#(request)","h":""}}}"#.utf8))
    }
    for request in 1...ServerLimits.listensPerConnectionMax {
        flooding.receive(frame: Array(#"{"t":"d","d":{"r":\#(request),"a":"q","b":{"p":"/f\#(request)","h":""}}}"#.utf8))
    }
    #expect(floodingSink.closedReason == nil)
    flooding.receive(frame: Array(#"{"t":"d","d":{"r":0,"a":"q","b":{"p":"/one-more","h":""}}}"#.utf8))
    #expect(floodingSink.closedReason?.contains("while the database was loading") == true)
    #expect(patientSink.closedReason == nil)

    slow.released.signal()
    while !(1...3).allSatisfy({ request in patientSink.frames.contains { $0.contains(#""r":\#(request),"#) } }),
        executor.drainWhenQueued() > 0
    {}
    for request in 1...3 { #expect(patientSink.frames.contains { $0.contains(#""r":\#(request),"#) }) }
}

/// A server made without webhook delivery (an embedding that gives it no hooks service) says so instead
/// of pretending; and only admins reach the hooks endpoints at all.
@Test func hooksWithoutADeliveryServiceAnswerNotImplemented() async throws {
    let server = makeServer()
    let owner = ["authorization": "Bearer owner"]
    let answer = try await send(server, .put, "/.settings/hooks.json", body: #"{"hooks":{}}"#, headers: owner)
    #expect(answer.status == 501)
    #expect(answer.bodyText.contains("without a hooks service"))
    #expect(try await send(server, .get, "/.settings/hooks/status.json").status == 401)
}
