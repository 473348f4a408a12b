import HearthCore

/// Client-to-server messages of the long-poll transport (docs/protocol.md §1.10), reassembled.
///
/// Each poll's query carries numbered triples: `seg<i>` (the segment's serial number, counted from 0
/// over the whole session), `ts<i>` (how many segments the message it belongs to has) and `d<i>` (the
/// segment: web-safe base64 with `.` padding). A message's segments are consecutive serials and may
/// arrive over several polls, out of order, or twice (a retried poll).
///
/// Every number here comes from a client, so each is checked against the bounds before it takes part
/// in any arithmetic; anything a real client never sends is a ``ProtocolViolation`` and the caller
/// closes the session.
///
///     var segments = LongPollSegments(pendingSegmentsMax: 10_000, pendingBytesMax: 16 << 20)
///     let messages = try segments.receive([("seg0", "0"), ("ts0", "1"), ("d0", "eyJ0IjoiZCJ9")])
///     // messages == [Array(#"{"t":"d"}"#.utf8)]
public struct LongPollSegments: Sendable {
    /// Segments kept waiting for the rest of their message; also the most segments one message may
    /// have and how far ahead of the next expected serial a segment may be.
    public let pendingSegmentsMax: Int
    /// Bytes of segment text kept waiting.
    public let pendingBytesMax: Int
    private var pending: [Int: (count: Int, chunk: [UInt8])] = [:]
    private var pendingBytes = 0
    /// The serial of the next message's first segment.
    private var nextSerial = 0

    /// Bytes of segment text kept waiting now.
    public var pendingByteCount: Int { pendingBytes }

    public init(pendingSegmentsMax: Int, pendingBytesMax: Int) {
        self.pendingSegmentsMax = pendingSegmentsMax
        self.pendingBytesMax = pendingBytesMax
    }

    /// Takes one poll's query items and returns every message now complete, in order.
    public mutating func receive(_ items: [(name: String, value: String)]) throws(ProtocolViolation) -> [[UInt8]] {
        var fields: [String: String] = [:]
        for item in items where item.name.hasPrefix("seg") || item.name.hasPrefix("ts") || item.name.hasPrefix("d") {
            fields[item.name] = item.value
        }
        var index = 0
        while let serialText = fields["seg\(index)"] {
            guard let countText = fields["ts\(index)"], let chunk = fields["d\(index)"] else {
                throw ProtocolViolation("long-poll segment \(index) lacks its ts or d field")
            }
            try add(serial: serialText, count: countText, chunk: Array(chunk.utf8))
            index += 1
        }
        return try takeComplete()
    }

    private mutating func add(serial serialText: String, count countText: String, chunk: [UInt8]) throws(ProtocolViolation) {
        guard let serial = Int(serialText), let count = Int(countText) else {
            throw ProtocolViolation("long-poll segment numbers must be integers")
        }
        guard (1...pendingSegmentsMax).contains(count) else {
            throw ProtocolViolation("a long-poll message has 1 to \(pendingSegmentsMax) segments")
        }
        // A segment already delivered: a retried poll. Compared before any subtraction can overflow.
        if serial < nextSerial { return }
        guard serial - nextSerial < pendingSegmentsMax else {
            throw ProtocolViolation("long-poll segment \(serial) is too far ahead of \(nextSerial)")
        }
        if let existing = pending[serial] {
            pendingBytes -= existing.chunk.count
        }
        guard pending.count < pendingSegmentsMax, pendingBytes + chunk.count <= pendingBytesMax else {
            throw ProtocolViolation("long-poll segments over \(pendingSegmentsMax) or \(pendingBytesMax) bytes")
        }
        pending[serial] = (count, chunk)
        pendingBytes += chunk.count
    }

    private mutating func takeComplete() throws(ProtocolViolation) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        while let first = pending[nextSerial] {
            // `count` ≤ pendingSegmentsMax and nextSerial only grows by counts: no overflow.
            let serials = nextSerial..<(nextSerial + first.count)
            guard serials.allSatisfy({ pending[$0] != nil }) else { break }
            var text: [UInt8] = []
            for serial in serials {
                guard let part = pending.removeValue(forKey: serial) else { continue }
                pendingBytes -= part.chunk.count
                text += part.chunk
            }
            nextSerial = serials.upperBound
            guard let message = Base64.decode(text) else {
                throw ProtocolViolation("a long-poll message is not base64")
            }
            messages.append(message)
        }
        return messages
    }
}
