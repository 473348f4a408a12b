/// One server-sent event: its `event:` name (`message` when none was given) and its `data:` lines
/// joined by newlines.
public struct ServerSentEvent: Sendable, Equatable {
    public var name: String
    public var data: [UInt8]

    public init(name: String, data: [UInt8]) {
        self.name = name
        self.data = data
    }
}

/// Reads a `text/event-stream` as its bytes arrive, in chunks cut anywhere (the WHATWG format: lines
/// ending in LF, CRLF or CR; `field: value`; a blank line ends an event; `:` lines are comments). What a
/// functions process reads the change feed with (docs/feed.md).
///
///     var parser = ServerSentEvents()
///     try parser.consume(chunk) { event in … }
public struct ServerSentEvents: Sendable {
    /// The longest line kept: an entry of the feed is one `data:` line, at most a write's size (16 MiB)
    /// plus its earlier values (256 KiB) in JSON, with room.
    public static let lineBytesMax = 64 << 20

    private var line: [UInt8] = []
    private var sawCarriageReturn = false
    private var name = ""
    private var data: [UInt8] = []
    private var hasData = false

    public init() {}

    /// Consumes `bytes`, calling `emit` for each event they complete.
    public mutating func consume(_ bytes: some Collection<UInt8>, _ emit: (ServerSentEvent) throws -> Void) throws {
        for byte in bytes {
            if sawCarriageReturn {
                sawCarriageReturn = false
                if byte == 0x0A { continue }  // CRLF: the CR ended the line
            }
            switch byte {
            case 0x0A, 0x0D:
                sawCarriageReturn = byte == 0x0D
                try endLine(emit)
            default:
                guard line.count < Self.lineBytesMax else {
                    throw TriggerError("an event-stream line is longer than \(Self.lineBytesMax) bytes")
                }
                line.append(byte)
            }
        }
    }

    private mutating func endLine(_ emit: (ServerSentEvent) throws -> Void) throws {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else {
            if hasData { try emit(ServerSentEvent(name: name.isEmpty ? "message" : name, data: data)) }
            name = ""
            data.removeAll(keepingCapacity: true)
            hasData = false
            return
        }
        guard line[0] != 0x3A else { return }  // a comment
        let colon = line.firstIndex(of: 0x3A) ?? line.endIndex
        var valueStart = colon < line.endIndex ? colon + 1 : colon
        if valueStart < line.endIndex && line[valueStart] == 0x20 { valueStart += 1 }
        let field = line[..<colon]
        let value = line[valueStart...]
        if field.elementsEqual("data".utf8) {
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        } else if field.elementsEqual("event".utf8) {
            name = String(decoding: value, as: UTF8.self)
        }
    }
}
