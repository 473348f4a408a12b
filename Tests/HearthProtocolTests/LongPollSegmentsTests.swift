import HearthProtocol
import Testing

private func segments() -> LongPollSegments { LongPollSegments(pendingSegmentsMax: 100, pendingBytesMax: 1_000) }

/// `text` as the long-poll transport sends it: web-safe base64, `.` padding.
private func webSafe(_ text: String) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    let bytes = Array(text.utf8)
    var out = ""
    var index = 0
    while index < bytes.count {
        let chunk = bytes[index..<min(index + 3, bytes.count)]
        var group = 0
        for (offset, byte) in chunk.enumerated() { group |= Int(byte) << (16 - 8 * offset) }
        for position in 0..<4 {
            out.append(position <= chunk.count ? alphabet[(group >> (18 - 6 * position)) & 63] : ".")
        }
        index += 3
    }
    return out
}

@Test func segmentsOfOneMessageArriveOutOfOrderAndTwice() throws {
    var reassembler = segments()
    let encoded = webSafe(#"{"t":"d","d":{"r":1}}"#)
    let cut = encoded.index(encoded.startIndex, offsetBy: 8)
    #expect(try reassembler.receive([("seg1", "1"), ("ts1", "2"), ("d1", String(encoded[cut...]))]).isEmpty)
    #expect(try reassembler.receive([("seg0", "1"), ("ts0", "2"), ("d0", String(encoded[..<cut]))]).isEmpty)
    let messages = try reassembler.receive([
        ("seg0", "0"), ("ts0", "2"), ("d0", String(encoded[..<cut])),
        ("seg1", "1"), ("ts1", "2"), ("d1", String(encoded[cut...])),
    ])
    #expect(messages.map { String(decoding: $0, as: UTF8.self) } == [#"{"t":"d","d":{"r":1}}"#])
    // Delivered already: a retried poll repeats nothing.
    #expect(try reassembler.receive([("seg0", "0"), ("ts0", "2"), ("d0", "AAAA")]).isEmpty)
}

@Test("Numbers no client sends are violations, never arithmetic on them", arguments: [
    [("seg0", "0"), ("ts0", "9223372036854775807"), ("d0", "e30.")],  // used to overflow nextSegment + count
    [("seg0", "9223372036854775807"), ("ts0", "1"), ("d0", "e30.")],
    [("seg0", "0"), ("ts0", "0"), ("d0", "e30.")],
    [("seg0", "0"), ("ts0", "-1"), ("d0", "e30.")],
    [("seg0", "100"), ("ts0", "1"), ("d0", "e30.")],
    [("seg0", "x"), ("ts0", "1"), ("d0", "e30.")],
    [("seg0", "0"), ("d0", "e30.")],
    [("seg0", "0"), ("ts0", "1"), ("d0", "not base64!")],
    [("seg0", "0"), ("ts0", "1"), ("d0", String(repeating: "A", count: 1_001))],
])
func outOfBoundsSegmentsAreViolations(items: [(String, String)]) {
    var reassembler = segments()
    #expect(throws: ProtocolViolation.self) { try reassembler.receive(items.map { (name: $0.0, value: $0.1) }) }
}

@Test func aNegativeSerialBelowTheNextOneIsAnOldSegment() throws {
    var reassembler = segments()
    #expect(try reassembler.receive([("seg0", "-9223372036854775808"), ("ts0", "1"), ("d0", "e30.")]).isEmpty)
    #expect(try reassembler.receive([("seg0", "0"), ("ts0", "1"), ("d0", "e30.")]) == [Array("{}".utf8)])
}

@Test func bytesWaitingForTheRestOfTheirMessageAreBounded() throws {
    var reassembler = segments()
    // Segments 1…9 of a ten-segment message whose first segment has not come: 900 bytes wait.
    for serial in 1..<10 {
        let items = [("seg0", String(serial)), ("ts0", "10"), ("d0", String(repeating: "A", count: 100))]
        #expect(try reassembler.receive(items.map { (name: $0.0, value: $0.1) }).isEmpty)
    }
    #expect(throws: ProtocolViolation.self) {
        try reassembler.receive([(name: "seg0", value: "0"), (name: "ts0", value: "10"), (name: "d0", value: String(repeating: "A", count: 101))])
    }
}
