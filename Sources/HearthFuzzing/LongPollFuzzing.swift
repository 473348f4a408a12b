import HearthProtocol

/// The long-poll transport's segments: a poll's query items, reassembled into messages.
///
/// Input: polls separated by newlines, each `name=value&…` (names `seg<i>`, `ts<i>`, `d<i>`).
enum LongPollFuzzing {
    static let target = FuzzTarget(name: "longpoll", input: "long-poll queries, one poll per line", run: run)

    static func run(_ bytes: [UInt8]) {
        var segments = LongPollSegments(pendingSegmentsMax: 64, pendingBytesMax: 1 << 16)
        for poll in bytes.split(separator: 10) {
            do {
                for message in try segments.receive(RESTFuzzing.items(poll)) {
                    fuzzCheck(message.count <= 1 << 16, "a message larger than the pending bound")
                }
            } catch {
                return  // the session would be closed
            }
        }
    }
}
