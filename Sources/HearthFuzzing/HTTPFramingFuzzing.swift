import HearthProtocol

/// How a request body is delimited, and chunked bodies: what the transport decides from a head and
/// decodes from the bytes after it.
///
/// Input: a line with the method, one with Content-Length (empty: absent), one with Transfer-Encoding
/// (empty: absent), then body bytes, fed to the decoder in two pieces cut at the first byte's value.
enum HTTPFramingFuzzing {
    static let target = FuzzTarget(name: "http-framing", input: "method, Content-Length and Transfer-Encoding lines, then a body", run: run)

    static func run(_ bytes: [UInt8]) {
        let lines = bytes.split(separator: 10, maxSplits: 3, omittingEmptySubsequences: false)
        guard lines.count == 4 else { return }
        let method = HTTPRequest.Method(rawValue: String(decoding: lines[0], as: UTF8.self)) ?? .put
        let length = lines[1].isEmpty ? nil : String(decoding: lines[1], as: UTF8.self)
        let encoding = lines[2].isEmpty ? nil : String(decoding: lines[2], as: UTF8.self)
        guard case .success(let framing) = RequestFraming.decide(method: method, contentLength: length, transferEncoding: encoding)
        else { return }
        if case .contentLength(let count) = framing { fuzzCheck(count > 0, "a zero length is no body") }
        var decoder = ChunkedBodyDecoder(bodyBytesMax: 4096)
        let body = Array(lines[3])
        let cut = body.first.map { Int($0) % (body.count + 1) } ?? 0
        do {
            if case .complete = try decoder.receive(body[..<cut]) { return }
            _ = try decoder.receive(body[cut...])
            fuzzCheck(decoder.body.count <= 4096, "a body over its bound")
        } catch {
            fuzzCheck([400, 413].contains(error.status), "status \(error.status)")
        }
    }
}
