import HearthTriggers
import Testing

struct ServerSentEventsTests {
    private func parse(_ chunks: [String]) throws -> [ServerSentEvent] {
        var parser = ServerSentEvents()
        var events: [ServerSentEvent] = []
        for chunk in chunks { try parser.consume(Array(chunk.utf8)) { events.append($0) } }
        return events
    }

    @Test func eventsAsTheFeedSendsThem() throws {
        let events = try parse(["event: entry\ndata: {\"position\":8192}\n\nevent: keep-alive\ndata: {}\n\n"])
        #expect(events == [ServerSentEvent(name: "entry", data: Array("{\"position\":8192}".utf8)), ServerSentEvent(name: "keep-alive", data: Array("{}".utf8))])
    }

    @Test func chunksCutAnywhereMakeTheSameEvents() throws {
        let stream = "event: entry\r\ndata: one\r\ndata: two\r\n\r\n: a comment\nevent: resync\rdata: \"gone\"\r\r"
        let whole = try parse([stream])
        #expect(whole.count == 2)
        #expect(whole[0].data == Array("one\ntwo".utf8))
        for cut in stream.indices {
            #expect(try parse([String(stream[..<cut]), String(stream[cut...])]) == whole)
        }
    }

    @Test func anEventWithoutANameIsAMessageAndOneWithoutDataIsNone() throws {
        #expect(try parse(["data:x\n\nevent: empty\n\n"]) == [ServerSentEvent(name: "message", data: Array("x".utf8))])
    }
}
