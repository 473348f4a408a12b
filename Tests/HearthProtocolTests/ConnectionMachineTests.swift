import HearthCore
import HearthProtocol
import HearthWire
import Testing

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Test func theHandshakeIsFirstAndHasTheRequiredTypes() throws {
    var machine = ConnectionMachine()
    #expect(machine.phase == .upgraded)
    let frames = machine.open(timestamp: 1_795_969_998_094, host: "127.0.0.1:9000", sessionID: "abc")
    #expect(frames.map(text) == [#"{"t":"c","d":{"t":"h","d":{"ts":1795969998094,"v":"5","h":"127.0.0.1:9000","s":"abc"}}}"#])
    #expect(machine.isOpen)
    // Opening twice sends nothing.
    #expect(machine.open(timestamp: 1, host: "x", sessionID: "y").isEmpty)
}

@Test func requestsPingsAndKeepalivesAreRecognised() throws {
    var machine = ConnectionMachine()
    _ = machine.open(timestamp: 1, host: "h", sessionID: "s")
    guard case .request(let request)? = try machine.receive(frame: bytes(#"{"t":"d","d":{"r":7,"a":"p","b":{"p":"/a/b","d":{"x":1},"h":""}}}"#)) else {
        Issue.record("not a request")
        return
    }
    #expect(request.number == 7)
    #expect(request.action == .put)
    #expect(request.path == Path("a/b"))
    #expect(request.fields["d"].map(text) == #"{"x":1}"#)
    #expect(request.node("h")?.stringValue == "")
    guard case .ping? = try machine.receive(frame: bytes(#"{"t":"c","d":{"t":"p","d":{}}}"#)) else {
        Issue.record("not a ping")
        return
    }
    #expect(try machine.receive(frame: bytes("0")) == nil)
    #expect(machine.phase == .open)
}

@Test func countFramesAreReassembled() throws {
    var machine = ConnectionMachine()
    _ = machine.open(timestamp: 1, host: "h", sessionID: "s")
    let message = #"{"t":"d","d":{"r":1,"a":"s","b":{"c":{"sdk.js.10-14-1":1}}}}"#
    let parts = [String(message.prefix(10)), String(message.dropFirst(10).prefix(20)), String(message.dropFirst(30))]
    #expect(try machine.receive(frame: bytes("3")) == nil)
    #expect(machine.phase == .reassembling(remaining: 3))
    #expect(try machine.receive(frame: bytes(parts[0])) == nil)
    #expect(try machine.receive(frame: bytes(parts[1])) == nil)
    guard case .request(let request)? = try machine.receive(frame: bytes(parts[2])) else {
        Issue.record("not reassembled")
        return
    }
    #expect(request.action == .stats)
    #expect(machine.phase == .open)
}

@Test func malformedMessagesCloseTheMachine() {
    var machine = ConnectionMachine()
    _ = machine.open(timestamp: 1, host: "h", sessionID: "s")
    #expect(throws: ProtocolViolation.self) { try machine.receive(frame: bytes(#"{"d":{}}"#)) }
    #expect(!machine.isOpen)
    var other = ConnectionMachine()
    _ = other.open(timestamp: 1, host: "h", sessionID: "s")
    // `r` must be an integer.
    #expect(throws: ProtocolViolation.self) { try other.receive(frame: bytes(#"{"t":"d","d":{"r":1.5,"a":"s","b":{}}}"#)) }
}

@Test func largeMessagesAreSplitOnScalarBoundariesAndNeverIntoTheFrameZero() throws {
    let small = bytes(#"{"t":"d","d":{}}"#)
    #expect(WireFrames.split(small) == [small])
    let value = String(repeating: "é€😀a", count: 10_000)
    var message: [UInt8] = []
    Node(value).appendJSON(to: &message)
    let frames = WireFrames.split(message)
    let count = try #require(Int(text(frames[0])))
    #expect(count == frames.count - 1)
    #expect(count > 1 && text(frames[0]).count <= 4)
    for frame in frames.dropFirst() {
        #expect(frame.count <= Wire.frameCharactersMax)
        #expect(String(validating: frame, as: UTF8.self) != nil)
    }
    #expect(Array(frames.dropFirst().joined()) == message)
    // Huge messages still use at most 9,999 segments.
    let huge = [UInt8](repeating: UInt8(ascii: "a"), count: 200_000_000)
    let hugeFrames = WireFrames.split(huge)
    #expect(hugeFrames.count <= 10_000 && text(hugeFrames[0]).count <= 4)
}

@Test func repliesUseTheExactJSONTypes() {
    #expect(text(WireEncoder.ok(3)) == #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":""}}}"#)
    #expect(text(WireEncoder.listenOK(2)) == #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#)
    #expect(text(WireEncoder.error(20, .dataStale, "Transaction hash does not match"))
        == #"{"t":"d","d":{"r":20,"b":{"s":"datastale","d":"Transaction hash does not match"}}}"#)
    #expect(text(WireEncoder.pong) == #"{"t":"c","d":{"t":"o","d":null}}"#)
    #expect(text(WireEncoder.set(path: Path("probe/list"), node: .empty, tag: 1))
        == #"{"t":"d","d":{"a":"d","b":{"p":"probe/list","d":null,"t":1}}}"#)
    #expect(text(WireEncoder.listenRevoked(path: Path("a"), queryJSON: bytes(#"{"l":2}"#)))
        == #"{"t":"d","d":{"a":"c","b":{"p":"a","q":[{"l":2}]}}}"#)
}
