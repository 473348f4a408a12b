/// A message split into WebSocket frames and put back together (docs/protocol.md §1.8), the same on
/// both sides: a message longer than ``Wire/frameCharactersMax`` goes as a frame holding the number of
/// segments (at most six digits) followed by that many segments.
public enum WireFrames {
    /// The frames of `message`: one when it fits, else a count frame and segments cut on UTF-8 scalar
    /// boundaries, at most 9,999 of them. Never the bare frame `0` (a keepalive).
    public static func split(_ message: [UInt8], segmentBytes: Int = Wire.frameCharactersMax) -> [[UInt8]] {
        guard message.count > segmentBytes else { return [message] }
        var size = max(segmentBytes, (message.count + 9_998) / 9_999)
        size = max(size, 8)
        var segments: [[UInt8]] = []
        var start = 0
        while start < message.count {
            var end = min(start + size, message.count)
            // Never end a segment inside a multi-byte scalar.
            while end < message.count && end > start + 1 && (message[end] & 0xC0) == 0x80 { end -= 1 }
            segments.append(Array(message[start..<end]))
            start = end
        }
        return [Array(String(segments.count).utf8)] + segments
    }

    /// Whether `frame` is a count frame: one to six ASCII digits (`0` is a keepalive, announcing nothing).
    static func segmentCount(_ frame: [UInt8]) -> Int? {
        guard !frame.isEmpty, frame.count <= 6, frame.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return frame.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
}

/// Puts messages back together from the frames of one connection (a value: the caller owns it).
///
///     var assembler = WireFrameAssembler(messageBytesMax: 16 << 20)
///     if let message = try assembler.receive(frame) { handle(message) }
public struct WireFrameAssembler: Sendable {
    /// Segments still to come of the message being put together; 0 between messages.
    public private(set) var remaining = 0
    private var parts: [UInt8] = []
    /// Largest message put together; more is refused (the connection should end).
    public let messageBytesMax: Int

    public init(messageBytesMax: Int) { self.messageBytesMax = messageBytesMax }

    public struct TooLarge: Error, Sendable {
        public let messageBytesMax: Int
    }

    /// The whole message `frame` completes, if any: nil for a count frame, a keepalive `0` or a segment
    /// that is not the last.
    public mutating func receive(_ frame: [UInt8]) throws(TooLarge) -> [UInt8]? {
        if remaining == 0 {
            if let count = WireFrames.segmentCount(frame) {
                remaining = count
                parts = []
                return nil
            }
            return frame
        }
        guard parts.count + frame.count <= messageBytesMax else {
            reset()
            throw TooLarge(messageBytesMax: messageBytesMax)
        }
        parts += frame
        remaining -= 1
        guard remaining == 0 else { return nil }
        defer { parts = [] }
        return parts
    }

    /// Bytes of the message being put together (0 between messages).
    public var assembledByteCount: Int { parts.count }

    /// Forgets a message half put together (the connection ended).
    public mutating func reset() {
        remaining = 0
        parts = []
    }
}
