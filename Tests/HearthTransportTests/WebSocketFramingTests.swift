import Foundation
import Testing

@testable import HearthTransport

#if canImport(Glibc)
    import Glibc
#endif

/// The frames `WebSocketConnection` writes itself when it sends several queued messages at once.
struct WebSocketFramingTests {
    @Test("Ready-made server frames use the short, 16-bit and 64-bit length forms, unmasked", arguments: [0, 5, 125, 126, 200, 65535, 65536, 70000])
    func serverTextFrameHeaders(length: Int) {
        let payload = [UInt8](repeating: 0x61, count: length)
        var frame: [UInt8] = []
        WebSocketConnection.appendServerTextFrame(payload, to: &frame)
        #expect(frame[0] == 0x81)
        #expect(frame[1] & 0x80 == 0, "server frames are never masked")
        let header: Int
        switch length {
        case ..<126:
            #expect(Int(frame[1]) == length)
            header = 2
        case ..<65536:
            #expect(frame[1] == 126)
            #expect(Int(frame[2]) << 8 | Int(frame[3]) == length)
            header = 4
        default:
            #expect(frame[1] == 127)
            #expect((2..<10).reduce(0) { $0 << 8 | Int(frame[$1]) } == length)
            header = 10
        }
        #expect(frame.count == header + length)
        #expect(Array(frame[header...]) == payload)
    }
}

extension LiveTransportTests {
    /// A client that pipelines many writes gets many pushes and replies queued in one loop iteration;
    /// they leave coalesced (several frames per send) and must arrive as whole, well-formed frames in order.
    @Test func pipelinedRealtimeWritesComeBackAsWholeFramesInOrder() throws {
        try withLiveServer { port in
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw ConnectFailed(port: port, errno: errno) }
            func sendAll(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } }
            var received: [UInt8] = []
            func receiveMore() -> Bool {
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = recv(fd, &buffer, buffer.count, 0)
                if count > 0 { received += buffer[..<count] }
                return count > 0
            }
            func frame(_ text: String) -> [UInt8] {
                let payload = Array(text.utf8)
                precondition(payload.count < 126)
                return [0x81, 0x80 | UInt8(payload.count), 0, 0, 0, 0] + payload  // a zero mask keeps the bytes
            }
            sendAll(Array("GET /.ws?v=5&ns=demo HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8))
            while received.firstRange(of: Array("\r\n\r\n".utf8)) == nil, receiveMore() {}
            let headerEnd = try #require(received.firstRange(of: Array("\r\n\r\n".utf8)))
            #expect(String(decoding: received[..<headerEnd.lowerBound], as: UTF8.self).hasPrefix("HTTP/1.1 101"))
            received.removeSubrange(..<headerEnd.upperBound)

            let writes = 40
            var requests = frame(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/p","h":""}}}"#)
            for r in 2...(writes + 1) { requests += frame(#"{"t":"d","d":{"r":\#(r),"a":"p","b":{"p":"/p","d":\#(r)}}}"#) }
            sendAll(requests)

            // Every frame whole and final, unmasked text; the pushes' values and the replies in order.
            var payloads: [String] = []
            var offset = 0
            while payloads.filter({ $0.contains(#""s":"ok""#) }).count < writes + 1 {
                if received.count - offset >= 2 {
                    #expect(received[offset] == 0x81, "FIN + text")
                    #expect(received[offset + 1] & 0x80 == 0, "unmasked")
                    var length = Int(received[offset + 1] & 0x7F), header = 2
                    if length == 126, received.count - offset >= 4 {
                        length = Int(received[offset + 2]) << 8 | Int(received[offset + 3])
                        header = 4
                    }
                    if received.count - offset >= header + length {
                        payloads.append(String(decoding: received[(offset + header)..<(offset + header + length)], as: UTF8.self))
                        offset += header + length
                        continue
                    }
                }
                guard receiveMore() else { break }
            }
            let handshake = try #require(payloads.first)
            #expect(handshake.hasPrefix(#"{"t":"c""#))
            let replies = payloads.filter { $0.contains(#""r":"#) }
            #expect(replies.count == writes + 1)
            #expect(replies.allSatisfy { $0.contains(#""s":"ok""#) })
            #expect(replies.map { String($0.split(separator: ",")[1]) } == (1...(writes + 1)).map { #""d":{"r":\#($0)"# })
            let pushed = payloads.filter { $0.hasPrefix(#"{"t":"d","d":{"a":"d""#) }.compactMap { push -> Int? in
                guard let range = push.range(of: #""d":"#, options: .backwards) else { return nil }
                return Int(push[range.upperBound...].prefix { $0.isNumber })
            }
            #expect(pushed.last == writes + 1)
            #expect(pushed == pushed.sorted(), "pushes in write order")
        }
    }
}
