import Foundation
import HearthServer
import HearthSQLite
import HearthStorage
import HearthTransport

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal blocking/epoll WebSocket client for the realtime scenarios: enough of RFC 6455 to send
/// masked text frames and count the server's unmasked text frames.
final class BenchSocket {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket() failed: errno \(errno) (raise the open-file limit)") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw BenchError("connect() failed: errno \(errno)") }
        let request = "GET /.ws?v=5&ns=bench HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try writeAll(Array(request.utf8))
        // Response headers, then the handshake frame.
        while true {
            try fill()
            if let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                guard String(decoding: buffer[..<end.lowerBound], as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
                    throw BenchError("upgrade refused")
                }
                buffer.removeSubrange(..<end.upperBound)
                break
            }
        }
        _ = try readFrame()
    }

    deinit { close(fd) }

    func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw BenchError("write failed: errno \(errno)")
            }
            offset += written
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { throw BenchError("connection closed") }
        buffer += chunk[..<count]
    }

    /// Sends one masked text frame.
    func send(_ text: String) throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        frame += [0, 0, 0, 0]  // a zero mask keeps the payload as is
        frame += payload
        try writeAll(frame)
    }

    /// The next whole frame's payload (blocking).
    func readFrame() throws -> [UInt8] {
        while true {
            if let (payload, used) = Self.parse(buffer) {
                buffer.removeSubrange(..<used)
                return payload
            }
            try fill()
        }
    }

    /// Reads what is available and returns how many whole frames it completed (non-blocking socket).
    func drainCount() -> Int {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        buffer += chunk[..<count]
        var frames = 0
        var offset = 0
        while let (_, used) = Self.parse(buffer[offset...]) {
            offset += used
            frames += 1
        }
        buffer.removeSubrange(..<offset)
        return frames
    }

    static func parse(_ bytes: ArraySlice<UInt8>) -> ([UInt8], Int)? {
        guard bytes.count >= 2 else { return nil }
        let base = bytes.startIndex
        var length = Int(bytes[base + 1] & 0x7F)
        var header = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[base + 2]) << 8 | Int(bytes[base + 3])
            header = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = (0..<8).reduce(0) { $0 << 8 | Int(bytes[base + 2 + $1]) }
            header = 10
        }
        guard bytes.count >= header + length else { return nil }
        return (Array(bytes[(base + header)..<(base + header + length)]), header + length)
    }

    static func parse(_ bytes: [UInt8]) -> ([UInt8], Int)? { parse(bytes[...]) }

    func setNonBlocking() { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `hearth serve` in this process: the real transport, server and SQLite engine in a temporary directory.
final class InProcessServer {
    let transport: HTTPServerTransport
    let server: DatabaseServer
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hearth-bench-ws-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let directory = self.directory
        server = DatabaseServer(
            configuration: ServerConfiguration(emulator: true, adminToken: nil, defaultNamespace: "bench"),
            openEngine: { try SQLiteStorageEngine(directory: directory, namespace: $0) })
        transport = HTTPServerTransport(configuration: TransportConfiguration(port: 0), handler: server)
        try transport.start()
    }

    var port: Int { transport.boundPort }

    func stop() {
        transport.stop()
        server.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension Scenario {
    /// One writer, N listeners on one path (N = HEARTH_BENCH_WS_LISTENERS, default 2,000; the issue's
    /// target uses 9,000), 100-byte values, 8 writes in flight, durable acks: deliveries per second.
    static let wsFanout = Scenario(
        name: "ws.fanout",
        summary: "1 writer, N WebSocket listeners on one path, 100-byte values, durable writes: deliveries/s"
    ) { context in
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let listenerCount = Int(ProcessInfo.processInfo.environment["HEARTH_BENCH_WS_LISTENERS"] ?? "") ?? 2_000
        let writes = 200, inFlight = 8
        let server = try InProcessServer()
        defer { server.stop() }
        var listeners: [BenchSocket] = []
        for _ in 0..<listenerCount {
            let socket = try BenchSocket(port: server.port)
            try socket.send(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/fan","h":""}}}"#)
            _ = try socket.readFrame()
            _ = try socket.readFrame()
            socket.setNonBlocking()
            listeners.append(socket)
        }
        let writer = try BenchSocket(port: server.port)
        writer.setNonBlocking()
        var pollSet = listeners.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        print("   \(listenerCount) listeners connected")
        let value = String(repeating: "v", count: 100)
        var request = 1
        let measurement = try context.measure("deliveries, \(listenerCount) listeners") {
            var delivered = 0
            let expected = listenerCount * writes
            var sent = 0, acked = 0
            while delivered < expected || acked < writes {
                while sent < writes && sent - acked < inFlight {
                    request += 1
                    try writer.send(#"{"t":"d","d":{"r":\#(request),"a":"p","b":{"p":"/fan","d":"\#(value)\#(request)"}}}"#)
                    sent += 1
                }
                // Acks (the writer listens to nothing: its frames are the replies).
                acked += writer.drainCount()
                let ready = poll(&pollSet, nfds_t(pollSet.count), 1)
                if ready > 0 {
                    for index in pollSet.indices where pollSet[index].revents != 0 {
                        pollSet[index].revents = 0
                        delivered += listeners[index].drainCount()
                    }
                }
            }
        }
        let total = Double(listenerCount * writes)
        return BenchmarkResult(
            scenario: "ws.fanout", metric: "WebSocket deliveries per second (\(listenerCount) listeners, in-process)",
            value: total / measurement.median.seconds, unit: "messages/s", reference: nil, referenceValue: nil)
    }
}
