import HearthTesting
import HearthCore
import HearthProtocol
import HearthStorage
import Synchronization
import Testing

@testable import HearthServer

/// A server and its loop, driven by the test: work handed to the loop waits until the test, acting as
/// the loop, drains it, and storage commits when the test says (`.whenTold`), so nothing runs unseen.
final class Harness {
    let executor = QueuedExecutor()
    let server: DatabaseServer

    init(emulator: Bool = true) {
        server = DatabaseServer(
            configuration: ServerConfiguration(emulator: emulator, adminToken: "admin-secret", defaultNamespace: "demo"),
            openEngine: { _ in InMemoryStorageEngine(commits: .whenTold) })
        server.clock = { 1_795_969_998_094 }
        server.loopStarted(executor: executor)
        // Outside emulator mode a namespace must exist before a connection may open it (an admin makes it).
        _ = try? server.open("demo-test")
    }

    func connect(host: String = "127.0.0.1:9000") -> (RealtimeSessionHandle, RecordingSink) {
        let sink = RecordingSink()
        let session = server.openRealtime(
            HTTPRequest(method: .get, path: "/.ws", queryItems: [("v", "5"), ("ns", "demo-test")], headers: ["host": host]),
            sink: sink)
        return (session, sink)
    }

    /// Runs the loop until `sink` holds a frame containing `marker` (a reply's `"r":N,`), or fails.
    func run(until marker: String, in sink: RecordingSink) {
        run(until: { sink.frames.contains(where: { $0.contains(marker) }) }, "no frame with \(marker)")
    }

    /// Turns the loop and commits until `done`; fails when nothing is left to run and it is not.
    func run(until done: () -> Bool, _ failure: @autoclosure () -> String = "nothing left to run, and not done") {
        while !done() {
            guard step() > 0 else {
                Issue.record(Comment(rawValue: failure()))
                return
            }
        }
    }

    /// Turns the loop and commits until nothing is left to run.
    func settle() { while step() > 0 {} }

    /// Runs the loop's queued work and the engines' queued commits once; how many items ran.
    private func step() -> Int {
        server.namespaces.all.reduce(executor.drain()) { ran, namespace in
            ran + ((namespace.database.engine as? InMemoryStorageEngine)?.runQueuedCommits() ?? 0)
        }
    }
}

private func send(_ session: RealtimeSessionHandle, _ text: String) { session.receive(frame: Array(text.utf8)) }

@Test func theTranscriptOfSection9IsReproduced() async throws {
    let harness = Harness()
    let (session, sink) = harness.connect()
    let handshake = try #require(sink.take().first)
    #expect(handshake.hasPrefix(#"{"t":"c","d":{"t":"h","d":{"ts":1795969998094,"v":"5","h":"127.0.0.1:9000","s":""#))

    send(session, #"{"t":"d","d":{"r":1,"a":"s","b":{"c":{"sdk.js.10-14-1":1}}}}"#)
    #expect(sink.take() == [#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}"#])

    send(session, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/probe/live","h":""}}}"#)
    #expect(sink.take() == [
        #"{"t":"d","d":{"a":"d","b":{"p":"probe/live","d":null}}}"#,
        #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#,
    ])

    send(session, #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/probe/live","d":{"msg":"hello","n":1}}}}"#)
    harness.run(until: #""r":3,"#, in: sink)
    #expect(sink.take() == [
        #"{"t":"d","d":{"a":"d","b":{"p":"probe/live","d":{"msg":"hello","n":1}}}}"#,
        #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":""}}}"#,
    ])

    send(session, #"{"t":"d","d":{"r":4,"a":"g","b":{"p":"/probe/unlistened","q":{}}}}"#)
    #expect(sink.take() == [#"{"t":"d","d":{"r":4,"b":{"s":"ok","d":null}}}"#])

    send(session, #"{"t":"d","d":{"r":5,"a":"q","b":{"p":"/probe/list","q":{"l":2,"vf":"l","i":"score"},"t":1,"h":""}}}"#)
    #expect(sink.take() == [
        #"{"t":"d","d":{"a":"d","b":{"p":"probe/list","d":null,"t":1}}}"#,
        #"{"t":"d","d":{"r":5,"b":{"s":"ok","d":{}}}}"#,
    ])
    send(session, #"{"t":"d","d":{"r":6,"a":"n","b":{"p":"/probe/list","q":{"l":2,"vf":"l","i":"score"},"t":1}}}"#)
    #expect(sink.take() == [#"{"t":"d","d":{"r":6,"b":{"s":"ok","d":""}}}"#])

    send(session, #"{"t":"d","d":{"r":8,"a":"m","b":{"p":"/probe/live","d":{"n":2,"extra/x":true}}}}"#)
    harness.run(until: #""r":8,"#, in: sink)
    #expect(sink.take() == [
        #"{"t":"d","d":{"a":"m","b":{"p":"probe/live","d":{"n":2,"extra/x":true}}}}"#,
        #"{"t":"d","d":{"r":8,"b":{"s":"ok","d":""}}}"#,
    ])

    send(session, #"{"t":"d","d":{"r":9,"a":"q","b":{"p":"/probe/counter","h":""}}}"#)
    _ = sink.take()
    send(session, #"{"t":"d","d":{"r":10,"a":"p","b":{"p":"/probe/counter","d":1,"h":""}}}"#)
    harness.run(until: #""r":10,"#, in: sink)
    #expect(sink.take() == [
        #"{"t":"d","d":{"a":"d","b":{"p":"probe/counter","d":1}}}"#,
        #"{"t":"d","d":{"r":10,"b":{"s":"ok","d":""}}}"#,
    ])
    // A stale hash: datastale with a string, nothing written.
    send(session, #"{"t":"d","d":{"r":20,"a":"p","b":{"p":"/probe/counter","d":2,"h":""}}}"#)
    harness.run(until: #""r":20,"#, in: sink)
    #expect(sink.take() == [#"{"t":"d","d":{"r":20,"b":{"s":"datastale","d":"Transaction hash does not match"}}}"#])
    // The right hash (§4.2: hash(1)) succeeds.
    send(session, #"{"t":"d","d":{"r":21,"a":"p","b":{"p":"/probe/counter","d":2,"h":"YPVfR2bXt/lcDjiQZ8pOkAd3qkQ="}}}"#)
    harness.run(until: #""r":21,"#, in: sink)
    #expect(sink.take().last == #"{"t":"d","d":{"r":21,"b":{"s":"ok","d":""}}}"#)

    send(session, #"{"t":"c","d":{"t":"p","d":{}}}"#)
    send(session, "0")
    #expect(sink.take() == [#"{"t":"c","d":{"t":"o","d":null}}"#])
}

@Test func writesReachOtherConnectionsAndOnlyTheirListens() async throws {
    let harness = Harness()
    let (a, sinkA) = harness.connect()
    let (b, sinkB) = harness.connect()
    send(b, #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/rooms/1","h":""}}}"#)
    send(b, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/rooms/1/title","h":""}}}"#)
    _ = sinkA.take()
    _ = sinkB.take()
    send(a, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/rooms","d":{"1":{"title":"x"},"2":{"title":"y"}}}}}"#)
    harness.run(until: #""r":1,"#, in: sinkA)
    // A write above the listen: the listen's own location only, never the sibling room.
    #expect(Set(sinkB.take()) == [
        #"{"t":"d","d":{"a":"d","b":{"p":"rooms/1","d":{"title":"x"}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"rooms/1/title","d":"x"}}}"#,
    ])
    #expect(sinkA.take() == [#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}"#])
    send(a, #"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/rooms/2/title","d":"z"}}}"#)
    harness.run(until: #""r":2,"#, in: sinkA)
    #expect(sinkB.take().isEmpty)
    // A write above the listen that leaves its location unchanged sends nothing there.
    send(a, #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/rooms","d":{"1":{"title":"x"},"2":{"title":"w"}}}}}"#)
    harness.run(until: #""r":3,"#, in: sinkA)
    #expect(sinkB.take().isEmpty)
    send(a, #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/","d":{"rooms":{"1":{"title":"x"}},"other":1}}}}"#)
    harness.run(until: #""r":4,"#, in: sinkA)
    #expect(sinkB.take().isEmpty)
}

@Test func aTaggedWindowSlidesAndIgnoresChangesOutsideIt() async throws {
    let harness = Harness()
    let (session, sink) = harness.connect()
    send(session, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/s","d":{"a":1,"b":2,"c":3}}}}"#)
    harness.run(until: #""r":1,"#, in: sink)
    send(session, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/s","q":{"l":2,"vf":"r","i":".value"},"t":3,"h":""}}}"#)
    #expect(sink.take().suffix(2) == [
        #"{"t":"d","d":{"a":"d","b":{"p":"s","d":{"b":2,"c":3},"t":3}}}"#,
        #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#,
    ])
    send(session, #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/s/a","d":0}}}"#)
    harness.run(until: #""r":3,"#, in: sink)
    #expect(sink.take() == [#"{"t":"d","d":{"r":3,"b":{"s":"ok","d":""}}}"#])
    send(session, #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/s","d":{"d":9,"b":null}}}}"#)
    harness.run(until: #""r":4,"#, in: sink)
    #expect(sink.take() == [
        #"{"t":"d","d":{"a":"d","b":{"p":"s","d":{"c":3,"d":9},"t":3}}}"#,
        #"{"t":"d","d":{"r":4,"b":{"s":"ok","d":""}}}"#,
    ])
}

@Test func onDisconnectRunsOnCloseAndCancelKeepsTheRest() async throws {
    let harness = Harness()
    let (leaver, leaverSink) = harness.connect()
    let (watcher, watcherSink) = harness.connect()
    send(leaver, #"{"t":"d","d":{"r":1,"a":"o","b":{"p":"/p","d":{"a":1,"b":{"c":2,"d":3},"t":{".sv":"timestamp"}}}}}"#)
    send(leaver, #"{"t":"d","d":{"r":2,"a":"oc","b":{"p":"/p/b/c","d":null}}}"#)
    #expect(leaverSink.frames.suffix(2) == [
        #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}"#, #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":""}}}"#,
    ])
    send(watcher, #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/p","h":""}}}"#)
    _ = watcherSink.take()
    leaver.closed()
    harness.run(until: { watcherSink.frames.count >= 3 })
    send(watcher, #"{"t":"d","d":{"r":2,"a":"g","b":{"p":"/p","q":{}}}}"#)
    #expect(watcherSink.frames.last == #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{"a":1,"b":{"d":3},"t":1795969998094}}}}"#)
}

@Test func credentialsFollowTheEmulatorAndAdminRules() {
    let emulator = Harness()
    let (session, sink) = emulator.connect()
    send(session, #"{"t":"d","d":{"r":1,"a":"gauth","b":{"cred":"owner"}}}"#)
    send(session, #"{"t":"d","d":{"r":2,"a":"auth","b":{"cred":"garbage"}}}"#)
    #expect(sink.take().suffix(2) == [
        #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":{"auth":null,"expires":null}}}}"#,
        #"{"t":"d","d":{"r":2,"b":{"s":"invalid_token","d":"Could not parse auth token."}}}"#,
    ])

    let locked = Harness(emulator: false)
    let (other, otherSink) = locked.connect()
    send(other, #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/x","h":""}}}"#)
    send(other, #"{"t":"d","d":{"r":2,"a":"auth","b":{"cred":"admin-secret"}}}"#)
    send(other, #"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/x","h":""}}}"#)
    #expect(otherSink.take().suffix(4) == [
        #"{"t":"d","d":{"r":1,"b":{"s":"permission_denied","d":"Permission denied"}}}"#,
        #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{"auth":null,"expires":null}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"x","d":null}}}"#,
        #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":{}}}}"#,
    ])
}

@Test func aSlowClientIsDisconnectedWithAReasonAndOthersStillGetTheirPushes() async throws {
    let harness = Harness()
    let (slow, slowSink) = harness.connect()
    let (fast, fastSink) = harness.connect()
    send(slow, #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/feed","h":""}}}"#)
    send(fast, #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/feed","h":""}}}"#)
    slowSink.limit = slowSink.frames.count
    send(fast, #"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/feed","d":"hi"}}}"#)
    harness.run(until: #""r":2,"#, in: fastSink)
    #expect(fastSink.frames.suffix(2) == [
        #"{"t":"d","d":{"a":"d","b":{"p":"feed","d":"hi"}}}"#, #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":""}}}"#,
    ])
    #expect(slowSink.closedReason?.contains("too slow") == true)
}

@Test func unauthRevokesListensThatAreNoLongerReadable() {
    let harness = Harness(emulator: false)
    let (session, sink) = harness.connect()
    send(session, #"{"t":"d","d":{"r":1,"a":"auth","b":{"cred":"admin-secret"}}}"#)
    send(session, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/a","h":""}}}"#)
    send(session, #"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/b","q":{"l":2,"vf":"l"},"t":4,"h":""}}}"#)
    _ = sink.take()
    send(session, #"{"t":"d","d":{"r":4,"a":"unauth","b":{}}}"#)
    let frames = sink.take()
    #expect(Set(frames.prefix(2)) == [
        #"{"t":"d","d":{"a":"c","b":{"p":"a"}}}"#, #"{"t":"d","d":{"a":"c","b":{"p":"b","q":[{"l":2,"vf":"l"}]}}}"#,
    ])
    #expect(frames.last == #"{"t":"d","d":{"r":4,"b":{"s":"ok","d":""}}}"#)
}

@Test func aReconnectWithLsClosesThePreviousConnectionAndRunsItsOnDisconnect() async throws {
    let harness = Harness()
    let (old, oldSink) = harness.connect()
    let handshake = try #require(oldSink.take().first)
    let sessionID = try #require(try Node(json: handshake).child(at: Path("d/d/s")).stringValue)
    send(old, #"{"t":"d","d":{"r":1,"a":"o","b":{"p":"/online","d":false}}}"#)
    let sink = RecordingSink()
    let new = harness.server.openRealtime(
        HTTPRequest(method: .get, path: "/.ws", queryItems: [("v", "5"), ("ls", sessionID), ("ns", "demo-test")],
                    headers: ["host": "h"]),
        sink: sink)
    #expect(oldSink.closedReason != nil)
    harness.settle()
    send(new, #"{"t":"d","d":{"r":1,"a":"g","b":{"p":"/online","q":{}}}}"#)
    #expect(sink.frames.last == #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":false}}}"#)
}

@Test func aListenWhoseHashMatchesGetsNoDataAgain() async throws {
    let harness = Harness()
    let (writer, writerSink) = harness.connect()
    send(writer, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/cached","d":{"a":1,"b":"two"}}}}"#)
    harness.run(until: #""r":1,"#, in: writerSink)
    let hash = try Node(json: #"{"a":1,"b":"two"}"#).hash
    let (reader, sink) = harness.connect()
    _ = sink.take()
    // The client's cache is current: only the `ok`, which marks that cache complete (§2.4).
    send(reader, #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/cached","h":"\#(hash)"}}}"#)
    #expect(sink.take() == [#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":{}}}}"#])
    // A stale cache gets the data first.
    send(reader, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/cached/b","h":"stale"}}}"#)
    #expect(sink.take() == [#"{"t":"d","d":{"a":"d","b":{"p":"cached/b","d":"two"}}}"#, #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#])
    // A tagged query compares the hash of its window.
    let window = try Node(json: #"{"a":1}"#).hash
    send(reader, #"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/cached","q":{"l":1,"vf":"l"},"t":7,"h":"\#(window)"}}}"#)
    #expect(sink.take() == [#"{"t":"d","d":{"r":3,"b":{"s":"ok","d":{}}}}"#])
}
