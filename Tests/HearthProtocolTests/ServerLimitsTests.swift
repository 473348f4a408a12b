import HearthCore
import HearthProtocol
import HearthWire
import Testing

@testable import HearthServer

@Test func serverLimitsHoldTogether() {
    // A whole wire frame, and the largest string a client may write, fit in a connection's queue / a body.
    #expect(ServerLimits.outboundBytesPerConnectionMax > Wire.frameCharactersMax * 4)
    #expect(ServerLimits.requestBodyBytesMax > Limits.stringLengthBytesMax)
    // Pings come before the timeout that declares a socket dead, and after the JS SDK's own 45 s keepalive.
    #expect(ServerLimits.webSocketPingSeconds > 45)
    #expect(ServerLimits.webSocketTimeoutSeconds > 2 * ServerLimits.webSocketPingSeconds)
    #expect(ServerLimits.requestHeaderBytesMax >= 8 * 1024)
}

@Test func aConnectionOverItsListenLimitIsToldWhichLimit() {
    let harness = Harness()
    let (session, sink) = harness.connect()
    _ = sink.take()
    for number in 1...ServerLimits.listensPerConnectionMax {
        session.receive(frame: Array(#"{"t":"d","d":{"r":\#(number),"a":"q","b":{"p":"/l/\#(number)","h":""}}}"#.utf8))
    }
    _ = sink.take()
    session.receive(frame: Array(#"{"t":"d","d":{"r":0,"a":"q","b":{"p":"/one/more","h":""}}}"#.utf8))
    #expect(sink.take() == [
        #"{"t":"d","d":{"r":0,"b":{"s":"failure","d":"Too many listens on this connection (10000)"}}}"#,
    ])
    withExtendedLifetime(harness) {}
}

@Test("Listens and gets at paths a put would refuse are refused the same way", arguments: [
    "/pub/..", "/pub/a.b", "/pub/$x", "/pub/a#b", "/pub/[x]", "/pub/.priority",
])
func realtimeReadsAtInvalidPathsAreRefused(path: String) {
    let harness = Harness()
    let (session, sink) = harness.connect()
    _ = sink.take()
    session.receive(frame: Array(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"\#(path)","h":""}}}"#.utf8))
    session.receive(frame: Array(#"{"t":"d","d":{"r":2,"a":"g","b":{"p":"\#(path)"}}}"#.utf8))
    let replies = sink.take()
    #expect(replies.count == 2)
    for reply in replies {
        #expect(reply.contains(#""s":"failure""#), "\(reply)")
        #expect(reply.contains("Invalid key"), "\(reply)")
    }
    withExtendedLifetime(harness) {}
}
