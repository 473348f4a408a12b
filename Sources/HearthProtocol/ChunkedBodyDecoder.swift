/// Decodes a `Transfer-Encoding: chunked` request body (RFC 9112 §7.1) as its bytes arrive, in pieces
/// of any size. Chunk extensions are skipped and trailer fields ignored. Every size is checked against
/// `bodyBytesMax` before it takes part in arithmetic, so a hostile size line is an error, never a trap.
///
///     var decoder = ChunkedBodyDecoder(bodyBytesMax: 1 << 20)
///     let state = try decoder.receive(Array("5\r\nhello\r\n0\r\n\r\n".utf8))   // .complete
///     decoder.body   // "hello"
public struct ChunkedBodyDecoder: Sendable {
    public enum State: Equatable, Sendable {
        case needsMore
        /// The last chunk and the trailer section have been read; `bytesAfter` bytes of the input given
        /// to the last ``receive(_:)`` came after them (a pipelined request).
        case complete(bytesAfter: Int)
    }

    /// Why a chunked body was refused.
    public struct Failure: Error, Equatable, Sendable {
        public let status: Int
        public let message: String
    }

    private enum Phase: Equatable {
        case size, extensionText, sizeLineFeed, data, dataCarriageReturn, dataLineFeed, trailerLineStart, trailerLine, done
    }

    public let bodyBytesMax: Int
    public private(set) var body: [UInt8] = []
    private var phase = Phase.size
    private var chunkRemaining = 0
    private var sizeDigits = 0
    private var lineBytes = 0
    /// Longest size or trailer line accepted: sizes, extensions and trailers are short.
    static let lineBytesMax = 4096

    public init(bodyBytesMax: Int) {
        self.bodyBytesMax = bodyBytesMax
    }

    public mutating func receive(_ bytes: some Collection<UInt8>) throws(Failure) -> State {
        var index = 0
        for byte in bytes {
            index += 1
            try step(byte)
            if phase == .done { return .complete(bytesAfter: bytes.count - index) }
        }
        return .needsMore
    }

    private mutating func step(_ byte: UInt8) throws(Failure) {
        switch phase {
        case .size:
            if let digit = Self.hexValue(byte) {
                sizeDigits += 1
                // 16 hex digits would overflow; the body bound is far lower anyway.
                guard sizeDigits <= 15, chunkRemaining <= (bodyBytesMax - body.count) >> 4 else { throw tooLarge() }
                chunkRemaining = chunkRemaining << 4 | digit
                guard chunkRemaining <= bodyBytesMax - body.count else { throw tooLarge() }
            } else if sizeDigits > 0 && (byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")) {
                phase = .extensionText
                lineBytes = 0
            } else if sizeDigits > 0 && byte == 13 {
                phase = .sizeLineFeed
            } else {
                throw malformed()
            }
        case .extensionText:
            lineBytes += 1
            guard lineBytes <= Self.lineBytesMax else { throw malformed() }
            if byte == 13 { phase = .sizeLineFeed }
        case .sizeLineFeed:
            guard byte == 10 else { throw malformed() }
            sizeDigits = 0
            phase = chunkRemaining > 0 ? .data : .trailerLineStart
        case .data:
            body.append(byte)
            chunkRemaining -= 1
            if chunkRemaining == 0 { phase = .dataCarriageReturn }
        case .dataCarriageReturn:
            guard byte == 13 else { throw malformed() }
            phase = .dataLineFeed
        case .dataLineFeed:
            guard byte == 10 else { throw malformed() }
            phase = .size
        case .trailerLineStart:
            // An empty line ends the body; anything else is a trailer field, skipped.
            if byte == 13 { return }
            if byte == 10 {
                phase = .done
                return
            }
            phase = .trailerLine
            lineBytes = 1
        case .trailerLine:
            lineBytes += 1
            guard lineBytes <= Self.lineBytesMax else { throw malformed() }
            if byte == 10 { phase = .trailerLineStart }
        case .done:
            return
        }
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(byte - UInt8(ascii: "A")) + 10
        default: return nil
        }
    }

    private func tooLarge() -> Failure {
        Failure(status: 413, message: "Request body is larger than the limit of \(bodyBytesMax) bytes")
    }

    private func malformed() -> Failure {
        Failure(status: 400, message: "The chunked request body is malformed (RFC 9112 §7.1)")
    }
}
