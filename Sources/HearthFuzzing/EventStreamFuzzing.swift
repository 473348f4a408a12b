import HearthTriggers

/// The change feed as a functions process reads it: a `text/event-stream` parsed as its bytes arrive
/// (``ServerSentEvents``). Properties: nothing crashes; the events are the same however the stream is
/// cut into chunks (whole, or split where the first byte says).
///
/// Input: one byte choosing where to cut, then the stream.
enum EventStreamFuzzing {
    static let target = FuzzTarget(name: "event-stream", input: "a cut position (one byte), then a text/event-stream", run: run)

    static func run(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let stream = Array(bytes.dropFirst())
        let whole = events(in: [stream[...]])
        let cut = stream.isEmpty ? 0 : Int(first) % (stream.count + 1)
        let split = events(in: [stream[..<cut], stream[cut...]])
        fuzzCheck(whole == split, "the events of a stream depend on where it was cut into chunks")
        if let whole {
            for event in whole { fuzzCheck(!event.name.isEmpty, "an event without a name") }
        }
    }

    private static func events(in chunks: [ArraySlice<UInt8>]) -> [ServerSentEvent]? {
        var parser = ServerSentEvents()
        var found: [ServerSentEvent] = []
        do {
            for chunk in chunks { try parser.consume(chunk) { found.append($0) } }
        } catch {
            return nil
        }
        return found
    }
}
