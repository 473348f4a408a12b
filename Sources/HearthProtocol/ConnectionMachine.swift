public import HearthCore

/// One client request after parsing: `{"r":number,"a":action,"b":{field: raw JSON}}` (§2.1).
public struct WireRequest: Sendable {
    public var number: Int64
    /// The action as sent (unknown actions are answered `failure`, not dropped).
    public var actionName: String
    public var action: Wire.Action? { Wire.Action(rawValue: actionName) }
    /// The body's top-level fields as raw JSON bytes (`null` included, so presence is visible).
    public var fields: [String: [UInt8]]

    public init(number: Int64, actionName: String, fields: [String: [UInt8]]) {
        self.number = number
        self.actionName = actionName
        self.fields = fields
    }

    /// A field parsed as a node without key validation (`nil` when absent; `null` is `Node.empty`).
    public func node(_ key: String) -> Node? {
        guard let raw = fields[key] else { return nil }
        return try? Node(jsonBytes: raw)
    }

    /// The `p` field as a path (`/a/b`, `a/b` and `""` all parse).
    public var path: Path? {
        guard let raw = fields[Wire.path] else { return nil }
        return JSONPlainScalar.string(raw).map { Path($0) }
    }
}

/// What one received frame amounts to.
public enum IncomingMessage: Sendable {
    case request(WireRequest)
    /// `{"t":"c","d":{"t":"p",…}}`: answer with a pong at once.
    case ping
    /// Any other control message from the client (upgrade `a`/`n`): nothing to do.
    case control(String)
}

/// Why a connection must be closed.
public struct ProtocolViolation: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The per-connection protocol state machine (ARCHITECTURE.md, "Decide in values"): pure, no sockets.
///
/// It owns the handshake, reassembles count-prefixed frames (§1.8), ignores keepalive `0` frames
/// (§1.7), turns messages into ``IncomingMessage`` values and splits outgoing messages into frames.
/// The caller performs what it returns.
///
///     var machine = ConnectionMachine()
///     let frames = machine.open(timestamp: now, host: "127.0.0.1:9000", sessionID: id)   // send these
///     switch try machine.receive(frame: bytes) { … }
public struct ConnectionMachine: Sendable {
    public enum Phase: Sendable, Equatable {
        /// Upgraded; the handshake has not been sent.
        case upgraded
        /// Handshake sent: requests are served.
        case open
        /// Reassembling a message announced by a count frame: `remaining` frames to go.
        case reassembling(remaining: Int)
        case closed(reason: String)
    }

    public private(set) var phase = Phase.upgraded
    private var assembled: [UInt8] = []
    /// Largest reassembled message accepted.
    public let messageBytesMax: Int

    public init(messageBytesMax: Int = 16 << 20) {
        self.messageBytesMax = messageBytesMax
    }

    public var isOpen: Bool {
        switch phase {
        case .open, .reassembling: return true
        case .upgraded, .closed: return false
        }
    }

    /// The handshake (§1.4), as frames to send; the connection is then open.
    public mutating func open(timestamp: Int64, host: String, sessionID: String) -> [[UInt8]] {
        guard phase == .upgraded else { return [] }
        phase = .open
        return Self.frames(for: WireEncoder.handshake(timestamp: timestamp, host: host, sessionID: sessionID))
    }

    /// The connection ends (socket closed, violation, slow reader): nothing more is received.
    public mutating func close(reason: String) {
        if case .closed = phase { return }
        phase = .closed(reason: reason)
        assembled = []
    }

    /// Consumes one WebSocket text frame. Returns nil when the frame completes no message (a count
    /// frame, a segment, a keepalive). Throws on anything a client never sends; the machine is
    /// then closed.
    public mutating func receive(frame: [UInt8]) throws(ProtocolViolation) -> IncomingMessage? {
        switch phase {
        case .upgraded, .closed:
            return nil
        case .open:
            if frame.count <= 6, !frame.isEmpty, frame.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                let count = Int(String(decoding: frame, as: UTF8.self)) ?? 0
                if count > 0 { phase = .reassembling(remaining: count) }
                return nil
            }
            return try parse(frame)
        case .reassembling(let remaining):
            guard assembled.count + frame.count <= messageBytesMax else {
                try violation("message over \(messageBytesMax) bytes")
            }
            assembled += frame
            if remaining > 1 {
                phase = .reassembling(remaining: remaining - 1)
                return nil
            }
            phase = .open
            let message = assembled
            assembled = []
            return try parse(message)
        }
    }

    private mutating func violation(_ text: String) throws(ProtocolViolation) -> Never {
        close(reason: text)
        throw ProtocolViolation(text)
    }

    private mutating func parse(_ message: [UInt8]) throws(ProtocolViolation) -> IncomingMessage? {
        guard let envelope = Self.fields(message), let kind = envelope[Wire.type].flatMap(Self.string),
            let inner = envelope[Wire.data]
        else { try violation("not a message envelope") }
        switch kind {
        case Wire.Kind.control.rawValue:
            guard let control = Self.fields(inner), let type = control[Wire.type].flatMap(Self.string) else {
                try violation("malformed control message")
            }
            return type == Wire.Control.ping.rawValue ? .ping : .control(type)
        case Wire.Kind.data.rawValue:
            guard let data = Self.fields(inner),
                let numberRaw = data[Wire.requestNumber], let number = Self.integer(numberRaw),
                let action = data[Wire.action].flatMap(Self.string)
            else { try violation("malformed request") }
            let body = data[Wire.body].flatMap(Self.fields) ?? [:]
            return .request(WireRequest(number: number, actionName: action, fields: body))
        default:
            try violation("unknown envelope type")
        }
    }

    static func fields(_ bytes: [UInt8]) -> [String: [UInt8]]? {
        guard let entries = JSONObjectSplitter.split(bytes) else { return nil }
        var fields: [String: [UInt8]] = [:]
        fields.reserveCapacity(entries.count)
        for (key, value) in entries { fields[key] = Array(value) }
        return fields
    }

    static func string(_ bytes: [UInt8]) -> String? { JSONPlainScalar.string(bytes) }

    static func integer(_ bytes: [UInt8]) -> Int64? {
        if let plain = JSONPlainScalar.plainInteger(bytes) { return plain }
        guard case .integer(let number)? = (try? Node(jsonBytes: bytes))?.leafValue else { return nil }
        return number
    }

    /// Splits a message into WebSocket frames (§1.8): one frame when it fits, else a count frame and
    /// segments cut on UTF-8 scalar boundaries, at most 9,999 of them. Never the bare frame `0`.
    public static func frames(for message: [UInt8], segmentBytes: Int = Wire.frameCharactersMax) -> [[UInt8]] {
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
}
