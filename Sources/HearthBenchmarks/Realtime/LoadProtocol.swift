#if canImport(Glibc)
    import Glibc
#endif

/// What the load generator speaks: Hearth's realtime protocol over WebSocket, or Redis's RESP pub/sub.
enum LoadProtocol: String {
    case realtime = "ws"
    case redis = "resp"
}

/// Nanoseconds on CLOCK_MONOTONIC: one clock for every process on the machine, so a worker can time a
/// delivery against the send time the writer put in the value.
func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// The bytes the load generator sends and how it finds the messages in what comes back.
enum LoadWire {
    /// A value of exactly `length` bytes (≥ 24) carrying its send time: `~<nanoseconds>~vvv…`.
    static func stampedValue(_ stamp: Int64, length: Int = 100) -> [UInt8] {
        var value = Array("~\(stamp)~".utf8)
        value += [UInt8](repeating: UInt8(ascii: "v"), count: max(0, length - value.count))
        return value
    }

    /// The send time in the first `~<digits>~` of `bytes`, if any.
    static func stamp(in bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        let count = bytes.count
        while index < count {
            if bytes[index] == UInt8(ascii: "~") {
                var cursor = index + 1
                var value: Int64 = 0
                while cursor < count, bytes[cursor] >= 48, bytes[cursor] <= 57 {
                    value = value * 10 + Int64(bytes[cursor] - 48)
                    cursor += 1
                }
                if cursor > index + 1, cursor < count, bytes[cursor] == UInt8(ascii: "~") { return value }
                index = cursor
            } else {
                index += 1
            }
        }
        return nil
    }

    // MARK: WebSocket (RFC 6455) and the realtime protocol (docs/protocol.md §1–§3)

    static func upgradeRequest(port: Int) -> [UInt8] {
        Array(("GET /.ws?v=5&ns=bench HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
    }

    /// One masked text frame (clients must mask, §5.3 of the RFC) holding `payload`.
    static func maskedTextFrame(_ payload: [UInt8], mask: UInt32 = 0x5EED_1234) -> [UInt8] {
        var frame: [UInt8] = [0x81]
        frame.reserveCapacity(payload.count + 14)
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let key = [UInt8(mask >> 24), UInt8((mask >> 16) & 0xFF), UInt8((mask >> 8) & 0xFF), UInt8(mask & 0xFF)]
        frame += key
        for (index, byte) in payload.enumerated() { frame.append(byte ^ key[index & 3]) }
        return frame
    }

    static func authRequest(_ r: Int, credential: String) -> [UInt8] {
        maskedTextFrame(Array(#"{"t":"d","d":{"r":\#(r),"a":"auth","b":{"cred":"\#(credential)"}}}"#.utf8))
    }

    static func listenRequest(_ r: Int, path: String) -> [UInt8] {
        maskedTextFrame(Array(#"{"t":"d","d":{"r":\#(r),"a":"q","b":{"p":"\#(path)","h":""}}}"#.utf8))
    }

    static func putRequest(_ r: Int, path: String, value: [UInt8]) -> [UInt8] {
        maskedTextFrame(Array(#"{"t":"d","d":{"r":\#(r),"a":"p","b":{"p":"\#(path)","d":""#.utf8) + value + Array(#""}}}"#.utf8))
    }

    /// The payload range and total length of the whole server frame at the start of `bytes`, or nil when
    /// it has not all arrived. Server frames are never masked.
    static func serverFrame(in bytes: UnsafeRawBufferPointer) -> (payload: Range<Int>, length: Int)? {
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[1] & 0x7F)
        var header = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            header = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = (0..<8).reduce(0) { $0 << 8 | Int(bytes[2 + $1]) }
            header = 10
        }
        guard bytes.count >= header + length else { return nil }
        return (header..<(header + length), header + length)
    }

    enum RealtimeMessage: Equatable {
        case handshake
        case ok
        case failed
        case push
        case other
    }

    static func classify(realtime payload: UnsafeRawBufferPointer) -> RealtimeMessage {
        if hasPrefix(payload, #"{"t":"c","d":{"t":"h""#) { return .handshake }
        if hasPrefix(payload, #"{"t":"d","d":{"a":"#) { return .push }
        if hasPrefix(payload, #"{"t":"d","d":{"r":"#) { return contains(payload, #""s":"ok""#) ? .ok : .failed }
        return .other
    }

    // MARK: RESP (Redis)

    static func command(_ parts: [[UInt8]]) -> [UInt8] {
        var out = Array("*\(parts.count)\r\n".utf8)
        for part in parts { out += Array("$\(part.count)\r\n".utf8) + part + [13, 10] }
        return out
    }

    static func command(_ parts: String...) -> [UInt8] { command(parts.map { Array($0.utf8) }) }

    /// The length of the whole RESP value at the start of `bytes`, or nil when it has not all arrived.
    static func respValueLength(in bytes: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
        guard start < bytes.count else { return nil }
        var lineEnd = start + 1
        while lineEnd + 1 < bytes.count, !(bytes[lineEnd] == 13 && bytes[lineEnd + 1] == 10) { lineEnd += 1 }
        guard lineEnd + 1 < bytes.count else { return nil }
        var number = 0, negative = false
        for index in (start + 1)..<lineEnd {
            if bytes[index] == UInt8(ascii: "-") { negative = true } else if bytes[index] >= 48, bytes[index] <= 57 { number = number * 10 + Int(bytes[index] - 48) }
        }
        let afterLine = lineEnd + 2
        switch bytes[start] {
        case UInt8(ascii: "$"):
            if negative { return afterLine - start }
            guard afterLine + number + 2 <= bytes.count else { return nil }
            return afterLine + number + 2 - start
        case UInt8(ascii: "*"):
            var cursor = afterLine
            if !negative {
                for _ in 0..<number {
                    guard let length = respValueLength(in: bytes, from: cursor) else { return nil }
                    cursor += length
                }
            }
            return cursor - start
        default:  // + - : and anything else line-shaped
            return afterLine - start
        }
    }

    // MARK: Byte helpers

    static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let start = prefix.utf8Start
        for index in 0..<count where bytes[index] != start[index] { return false }
        return true
    }

    static func contains(_ bytes: UnsafeRawBufferPointer, _ needle: StaticString) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let start = needle.utf8Start
        outer: for offset in 0...(bytes.count - count) {
            for index in 0..<count where bytes[offset + index] != start[index] { continue outer }
            return true
        }
        return false
    }
}
