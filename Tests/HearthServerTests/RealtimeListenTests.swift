import HearthCore
import HearthProtocol
import HearthStorage
import HearthRules
import HearthTesting
import Testing

@testable import HearthServer

/// A server whose loop is the test (QueuedExecutor), in-memory storage.
final class LoopHarness {
    let executor = QueuedExecutor()
    let server: DatabaseServer
    let namespace: Namespace

    init(emulator: Bool = true) {
        server = DatabaseServer(
            configuration: ServerConfiguration(emulator: emulator, adminToken: "admin-secret", defaultNamespace: "demo"),
            openEngine: { _ in InMemoryStorageEngine(commits: .whenTold) })
        server.clock = { 1_795_969_998_094 }
        server.loopStarted(executor: executor)
        namespace = try! server.open("review")
    }

    func connect(_ sink: FrameRecorder = FrameRecorder()) -> (RealtimeSessionHandle, FrameRecorder) {
        let session = server.openRealtime(
            HTTPRequest(method: .get, path: "/.ws", queryItems: [("v", "5"), ("ns", "review")], headers: ["host": "h"]),
            sink: sink)
        _ = sink.take()
        return (session, sink)
    }

    func send(_ session: RealtimeSessionHandle, _ body: String) { session.receive(frame: Array(body.utf8)) }

    /// Turns the loop and commits until `done`; fails when nothing is left to run and it is not.
    func run(until done: () -> Bool) async throws {
        while !done() {
            guard executor.drain() + runCommits(server) > 0 else {
                Issue.record("nothing left to run, and not done")
                return
            }
        }
    }

    func run(until marker: String, in sink: FrameRecorder) async throws {
        try await run { sink.frames.contains { $0.contains(marker) } }
    }

    /// A REST request; the answer once the loop produced one.
    func rest(_ method: HTTPRequest.Method, _ path: String, _ body: String = "", query: [(String, String)] = [],
              headers: [String: String] = [:]) async throws -> HTTPResponse {
        let responder = RecordingResponder()
        server.handle(HTTPRequest(method: method, path: path, queryItems: [("ns", "review")] + query.map { (name: $0.0, value: $0.1) },
                                  headers: headers, body: Array(body.utf8)), responder: responder)
        try await run { responder.response != nil }
        return try #require(responder.response)
    }

    func stream(_ path: String, query: [(String, String)] = [], limit: Int = .max) -> RecordingResponder {
        let responder = RecordingResponder(limit: limit)
        server.handle(HTTPRequest(method: .get, path: path, queryItems: [("ns", "review")] + query.map { (name: $0.0, value: $0.1) },
                                  headers: ["accept": "text/event-stream"]), responder: responder)
        return responder
    }
}

/// A sink that records frames, refuses past `limit`, counts closes, and can run `onSend` on each send.
final class FrameRecorder: RealtimeSink {
    var frames: [String] = []
    var closedReason: String?
    var closes = 0
    var limit = Int.max
    var onSend: (() -> Void)?
    var splitsLargeMessages: Bool { true }

    func sendMessage(_ frames: [[UInt8]]) -> Bool {
        onSend?()
        guard self.frames.count < limit else { return false }
        self.frames += frames.map { String(decoding: $0, as: UTF8.self) }
        return true
    }
    func close(reason: String, immediately: Bool) {
        closes += 1
        closedReason = reason
    }
    func take() -> [String] {
        defer { frames = [] }
        return frames
    }
}

struct RealtimeListenTests {
    @Test("Listens, tags, re-listen and unlisten: each listen hears what it did before")
    func listensTagsAndUnlisten() async throws {
        let h = LoopHarness()
        let (writer, writerSink) = h.connect()
        h.send(writer, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/s","d":{"a":1,"b":2,"c":3}}}}"#)
        try await h.run(until: #""r":1,"#, in: writerSink)
        let (s, sink) = h.connect()
        // Two tagged query listens at one path, plus an untagged one, plus a tagged one whose query loads all.
        h.send(s, #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/s","q":{"l":1,"vf":"l","i":".value"},"t":1,"h":""}}}"#)
        h.send(s, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/s","q":{"l":2,"vf":"r","i":".value"},"t":2,"h":""}}}"#)
        h.send(s, #"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/s/b","h":""}}}"#)
        h.send(s, #"{"t":"d","d":{"r":4,"a":"q","b":{"p":"/s/c","q":{"i":".value"},"t":7,"h":""}}}"#)
        #expect(sink.take() == [
            #"{"t":"d","d":{"a":"d","b":{"p":"s","d":{"a":1},"t":1}}}"#, #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":{}}}}"#,
            #"{"t":"d","d":{"a":"d","b":{"p":"s","d":{"b":2,"c":3},"t":2}}}"#, #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#,
            #"{"t":"d","d":{"a":"d","b":{"p":"s/b","d":2}}}"#, #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":{}}}}"#,
            #"{"t":"d","d":{"a":"d","b":{"p":"s/c","d":3}}}"#, #"{"t":"d","d":{"r":4,"b":{"s":"ok","d":{}}}}"#,
        ])
        #expect(h.namespace.listeners.subscriptionCount == 4 + 0)
        // Unlisten tag 1 only.
        h.send(s, #"{"t":"d","d":{"r":5,"a":"n","b":{"p":"/s","q":{"l":1,"vf":"l","i":".value"},"t":1}}}"#)
        #expect(sink.take() == [#"{"t":"d","d":{"r":5,"b":{"s":"ok","d":""}}}"#])
        #expect(h.namespace.listeners.subscriptionCount == 3)
        h.send(writer, #"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/s/a","d":0}}}"#)
        try await h.run(until: #""r":2,"#, in: writerSink)
        #expect(sink.take().isEmpty)  // tag 1's window would have changed; it is gone; tag 2's did not
        h.send(writer, #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/s/c","d":9}}}"#)
        try await h.run(until: #""r":3,"#, in: writerSink)
        #expect(Set(sink.take()) == [
            #"{"t":"d","d":{"a":"d","b":{"p":"s","d":{"b":2,"c":9},"t":2}}}"#,
            #"{"t":"d","d":{"a":"d","b":{"p":"s/c","d":9}}}"#,
        ])
        // Re-listen tag 2 with another query: replaced, not doubled.
        h.send(s, #"{"t":"d","d":{"r":6,"a":"q","b":{"p":"/s","q":{"l":1,"vf":"l","i":".value"},"t":2,"h":""}}}"#)
        #expect(sink.take() == [
            #"{"t":"d","d":{"a":"d","b":{"p":"s","d":{"a":0},"t":2}}}"#, #"{"t":"d","d":{"r":6,"b":{"s":"ok","d":{}}}}"#,
        ])
        #expect(h.namespace.listeners.subscriptionCount == 3)
        h.send(writer, #"{"t":"d","d":{"r":4,"a":"p","b":{"p":"/s/a","d":-1}}}"#)
        try await h.run(until: #""r":4,"#, in: writerSink)
        #expect(sink.take() == [#"{"t":"d","d":{"a":"d","b":{"p":"s","d":{"a":-1},"t":2}}}"#])
        // Unlisten of the tagged query that loads all data (tag 7).
        h.send(s, #"{"t":"d","d":{"r":7,"a":"n","b":{"p":"/s/c","q":{"i":".value"},"t":7}}}"#)
        #expect(h.namespace.listeners.subscriptionCount == 2)
        s.closed()
        #expect(h.namespace.listeners.subscriptionCount == 0)
    }

    @Test("A slow session with several listens a write reaches is cut off once, and unsubscribed")
    func slowSessionIsCutOffOnce() async throws {
        let h = LoopHarness()
        let (writer, writerSink) = h.connect()
        let (slow, slowSink) = h.connect()
        for (r, path) in [(1, "/f"), (2, "/f/a"), (3, "/f/b")] {
            h.send(slow, #"{"t":"d","d":{"r":\#(r),"a":"q","b":{"p":"\#(path)","h":""}}}"#)
        }
        #expect(h.namespace.listeners.subscriptionCount == 3)
        slowSink.limit = slowSink.frames.count
        h.send(writer, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/f","d":{"a":1,"b":2}}}}"#)
        try await h.run(until: #""r":1,"#, in: writerSink)
        #expect(slowSink.closes == 1)
        #expect(h.namespace.listeners.subscriptionCount == 0)
        #expect(h.namespace.listeners.realtimeSessionCount == 1)
    }
}

struct FanOutReentrancyTests {
    @Test("A delivery whose send re-enters the namespace (closes another session, listens, writes) does not trap")
    func sendCallbackReentersTheNamespace() async throws {
        let h = LoopHarness()
        let (writer, writerSink) = h.connect()
        let (a, aSink) = h.connect()
        let (b, bSink) = h.connect()
        for session in [a, b] {
            h.send(session, #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/x","h":""}}}"#)
            h.send(session, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/x/y","h":""}}}"#)
        }
        let stream = h.stream("/x.json")
        var fired = false
        for sink in [aSink, bSink] {
            sink.onSend = { [h] in
                guard !fired else { return }
                fired = true
                b.closed()
                h.send(a, #"{"t":"d","d":{"r":9,"a":"q","b":{"p":"/x/z","h":""}}}"#)
                h.send(a, #"{"t":"d","d":{"r":10,"a":"p","b":{"p":"/x/w","d":1}}}"#)
                h.namespace.replaceRules(try! RuleSet(source: #"{"rules":{".read":true,".write":true}}"#), now: 0)
            }
        }
        h.send(writer, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/x","d":{"y":1}}}}"#)
        try await h.run(until: #""r":1,"#, in: writerSink)
        try await h.run(until: #""r":10,"#, in: aSink)
        #expect(fired)
        #expect(stream.text.contains("\"data\":{\"y\":1}"))
        _ = bSink
    }
}

struct StreamUnsubscribeTests {
    @Test("Streams leave the fan-out when closed, cancelled by new rules, or cut off as slow")
    func streamsUnsubscribe() async throws {
        let h = LoopHarness()
        let closedByClient = h.stream("/a.json")
        let cancelled = h.stream("/secret.json")
        let slow = h.stream("/a.json", limit: 10)
        #expect(h.namespace.listeners.subscriptionCount == 3 && h.namespace.streams.count == 3)
        closedByClient.onClose?()
        #expect(h.namespace.listeners.subscriptionCount == 2)
        h.namespace.replaceRules(try RuleSet(source: #"{"rules":{"a":{".read":true,".write":true},"secret":{".read":false}}}"#), now: 0)
        #expect(cancelled.text.contains("event: cancel"))
        #expect(h.namespace.listeners.subscriptionCount == 1)
        _ = try await h.rest(.put, "/a.json", "\"\(String(repeating: "x", count: 50))\"", headers: ["authorization": "Bearer owner"])
        _ = try await h.rest(.put, "/a.json", "1", headers: ["authorization": "Bearer owner"])
        #expect(slow.aborted)
        #expect(h.namespace.listeners.subscriptionCount == 0 && h.namespace.streams.isEmpty)
    }
}
