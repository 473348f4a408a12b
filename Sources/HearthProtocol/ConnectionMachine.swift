public import HearthCore
public import HearthWire

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
    private var assembler: WireFrameAssembler
    /// Largest reassembled message accepted.
    public var messageBytesMax: Int { assembler.messageBytesMax }
    /// Bytes of a message being reassembled, held until its last frame.
    public var reassemblingByteCount: Int { assembler.assembledByteCount }

    public init(messageBytesMax: Int = 16 << 20) {
        assembler = WireFrameAssembler(messageBytesMax: messageBytesMax)
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
        return WireFrames.split(WireEncoder.handshake(timestamp: timestamp, host: host, sessionID: sessionID))
    }

    /// The connection ends (socket closed, violation, slow reader): nothing more is received.
    public mutating func close(reason: String) {
        if case .closed = phase { return }
        phase = .closed(reason: reason)
        assembler.reset()
    }

    /// Consumes one WebSocket text frame. Returns nil when the frame completes no message (a count
    /// frame, a segment, a keepalive). Throws on anything a client never sends; the machine is
    /// then closed.
    public mutating func receive(frame: [UInt8]) throws(ProtocolViolation) -> IncomingMessage? {
        switch phase {
        case .upgraded, .closed:
            return nil
        case .open, .reassembling:
            let message: [UInt8]?
            do { message = try assembler.receive(frame) } catch { try violation("message over \(messageBytesMax) bytes") }
            phase = assembler.remaining > 0 ? .reassembling(remaining: assembler.remaining) : .open
            guard let message else { return nil }
            return try parse(message)
        }
    }

    private mutating func violation(_ text: String) throws(ProtocolViolation) -> Never {
        close(reason: text)
        throw ProtocolViolation(text)
    }

    private mutating func parse(_ message: [UInt8]) throws(ProtocolViolation) -> IncomingMessage? {
        guard let envelope = WireFields.of(message), let kind = envelope[Wire.type].flatMap(WireFields.string),
            let inner = envelope[Wire.data]
        else { try violation("not a message envelope") }
        switch kind {
        case Wire.Kind.control.rawValue:
            guard let control = WireFields.of(inner), let type = control[Wire.type].flatMap(WireFields.string) else {
                try violation("malformed control message")
            }
            return type == Wire.Control.ping.rawValue ? .ping : .control(type)
        case Wire.Kind.data.rawValue:
            guard let data = WireFields.of(inner),
                let numberRaw = data[Wire.requestNumber], let number = WireFields.integer(numberRaw),
                let action = data[Wire.action].flatMap(WireFields.string)
            else { try violation("malformed request") }
            let body = data[Wire.body].flatMap(WireFields.of) ?? [:]
            return .request(WireRequest(number: number, actionName: action, fields: body))
        default:
            try violation("unknown envelope type")
        }
    }
}
