import HearthTesting
import HearthCore
import HearthProtocol
import HearthStorage
import Testing

@testable import HearthServer

private func send(_ session: RealtimeSessionHandle, _ text: String) { session.receive(frame: Array(text.utf8)) }

/// An emulator-mode server with `rules`, and a connection signed in as `uid` through an unsigned token.
private func signedIn(_ uid: String, rules: String) async throws -> (Harness, RealtimeSessionHandle, RecordingSink) {
    let harness = Harness()
    let namespace = try harness.server.open("demo-test")
    namespace.replaceRules(try .init(source: rules), now: 0)
    let (session, sink) = harness.connect()
    // {"alg":"none"}.{"sub":uid}. as the JS SDK's emulator mode sends it.
    let payload = Array(#"{"sub":"\#(uid)","user_id":"\#(uid)"}"#.utf8)
    let token = "eyJhbGciOiJub25lIn0." + base64URL(payload) + "."
    send(session, #"{"t":"d","d":{"r":1,"a":"auth","b":{"cred":"\#(token)"}}}"#)
    harness.run(until: #""r":1,"#, in: sink)
    _ = sink.take()
    return (harness, session, sink)
}

private func base64URL(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    var out = ""
    var index = 0
    while index < bytes.count {
        let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
        let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
        for position in 0..<(chunk.count + 1) { out.append(alphabet[(value >> (18 - 6 * position)) & 63]) }
        index += 3
    }
    return out
}

private let ownerOnly = """
    {"rules": {"users": {"$uid": {".read": "auth.uid == $uid", ".write": "auth.uid == $uid"}},
               "scores": {".read": true, ".indexOn": "points"}}}
    """

@Test func listensAndWritesAreDecidedByTheRules() async throws {
    let (harness, session, sink) = try await signedIn("ada", rules: ownerOnly)
    send(session, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/users/bob","h":""}}}"#)
    send(session, #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/users/bob/name","d":"x"}}}"#)
    harness.run(until: #""r":3,"#, in: sink)
    #expect(sink.frames.contains(#"{"t":"d","d":{"r":2,"b":{"s":"permission_denied","d":"Permission denied"}}}"#))
    #expect(sink.frames.contains(#"{"t":"d","d":{"r":3,"b":{"s":"permission_denied","d":"Permission denied"}}}"#))
    _ = sink.take()
    send(session, #"{"t":"d","d":{"r":4,"a":"p","b":{"p":"/users/ada/name","d":"Ada"}}}"#)
    harness.run(until: #""r":4,"#, in: sink)
    #expect(sink.frames.last == #"{"t":"d","d":{"r":4,"b":{"s":"ok","d":""}}}"#)
}

@Test func anUnindexedQueryGetsTheNoIndexWarningAndAnIndexedOneDoesNot() async throws {
    let (harness, session, sink) = try await signedIn("ada", rules: ownerOnly)
    send(session, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/scores","q":{"i":"points","l":3,"vf":"r"},"t":1,"h":""}}}"#)
    send(session, #"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/scores","q":{"i":"name","l":3,"vf":"r"},"t":2,"h":""}}}"#)
    #expect(sink.frames.contains(#"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#))
    #expect(sink.frames.contains(#"{"t":"d","d":{"r":3,"b":{"s":"ok","d":{"w":["no_index"]}}}}"#))
    withExtendedLifetime(harness) {}
}

@Test func newRulesRevokeListensThatLostTheirRead() async throws {
    let (harness, session, sink) = try await signedIn("ada", rules: ownerOnly)
    send(session, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/users/ada","h":""}}}"#)
    send(session, #"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/scores","h":""}}}"#)
    _ = sink.take()
    let namespace = try harness.server.open("demo-test")
    namespace.replaceRules(try .init(source: #"{"rules": {"scores": {".read": true}}}"#), now: 0)
    #expect(sink.take() == [#"{"t":"d","d":{"a":"c","b":{"p":"users/ada"}}}"#])
}

@Test func onDisconnectWritesAreCheckedWhenRegistered() async throws {
    let (harness, session, sink) = try await signedIn("ada", rules: ownerOnly)
    send(session, #"{"t":"d","d":{"r":2,"a":"o","b":{"p":"/users/bob/online","d":false}}}"#)
    send(session, #"{"t":"d","d":{"r":3,"a":"o","b":{"p":"/users/ada/online","d":false}}}"#)
    #expect(sink.take() == [
        #"{"t":"d","d":{"r":2,"b":{"s":"permission_denied","d":"Permission denied"}}}"#,
        #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":""}}}"#,
    ])
    withExtendedLifetime(harness) {}
}

@Test func aListenWithoutATagIsDecidedAsAPlainRead() async throws {
    let (harness, session, sink) = try await signedIn("ada", rules: #"{"rules": {"items": {".read": "query.limitToFirst <= 2"}}}"#)
    send(session, #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/items","q":{"l":2,"vf":"l"},"h":""}}}"#)
    send(session, #"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/items","q":{"l":2,"vf":"l"},"t":7,"h":""}}}"#)
    #expect(sink.frames.contains(#"{"t":"d","d":{"r":2,"b":{"s":"permission_denied","d":"Permission denied"}}}"#))
    #expect(sink.frames.contains(#"{"t":"d","d":{"r":3,"b":{"s":"ok","d":{}}}}"#))
    withExtendedLifetime(harness) {}
}

@Test func onDisconnectRunsWithTheCredentialThatRegisteredIt() async throws {
    let (harness, session, sink) = try await signedIn("ada", rules: ownerOnly)
    send(session, #"{"t":"d","d":{"r":2,"a":"o","b":{"p":"/users/ada/online","d":false}}}"#)
    send(session, #"{"t":"d","d":{"r":3,"a":"unauth","b":{}}}"#)
    #expect(sink.frames.last == #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":""}}}"#)
    session.closed()
    let namespace = try harness.server.open("demo-test")
    harness.run(until: { !namespace.database.root.child(at: Path("users/ada/online")).isEmpty })
    #expect(namespace.database.root.child(at: Path("users/ada/online")) == Node(false))
}
