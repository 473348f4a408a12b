import Foundation
import Synchronization
import HearthServer
import HearthStorage
import HearthTesting
import Testing

@testable import HearthTransport

#if canImport(Glibc)
    import Glibc
#endif

/// Sends raw bytes to 127.0.0.1:`port` and reads until `until` matches or the peer closes.
func exchange(port: Int, _ request: String, until done: (String) -> Bool) throws -> String {
    var fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = Loopback.address(port: port)
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var connected: Int32 = -1
    var connectError: Int32 = 0
    for attempt in 0..<100 {
        if attempt > 0 {
            close(fd)
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            usleep(20_000)
        }
        connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        connectError = errno
        if connected == 0 || connectError != ECONNREFUSED { break }
    }
    guard connected == 0 else { throw ConnectFailed(port: port, errno: connectError) }
    let bytes = Array(request.utf8)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while !done(String(decoding: received, as: UTF8.self)) {
        let count = recv(fd, &buffer, buffer.count, 0)
        if count <= 0 { break }
        received += buffer[..<count]
    }
    return String(decoding: received, as: UTF8.self)
}

/// The test's own connection could not be made (see ``LiveTransportTests``).
struct ConnectFailed: Error {
    var port: Int
    var errno: Int32
}

/// Runs `body` against a fresh live server; when its connection cannot be made at all, once more with
/// another fresh server (at most three tries), since that failure is the test process's, not the server's.
func withLiveServer(stateTimeoutSeconds: Int = 10, _ body: (Int) throws -> Void) throws {
    var lastFailure: ConnectFailed?
    for _ in 0..<3 {
        do {
            try withOneLiveServer(stateTimeoutSeconds: stateTimeoutSeconds, body)
            return
        } catch let failure as ConnectFailed {
            lastFailure = failure
        }
    }
    if let lastFailure {
        Issue.record("connect to port \(lastFailure.port) failed three times: errno \(lastFailure.errno)")
    }
}

func withOneLiveServer(stateTimeoutSeconds: Int, _ body: (Int) throws -> Void) throws {
    let server = DatabaseServer(
        configuration: ServerConfiguration(emulator: true, adminToken: nil, defaultNamespace: "demo"),
        openEngine: { _ in InMemoryStorageEngine() })
    var transport: HTTPServerTransport?
    for _ in 0..<20 {
        let candidate = HTTPServerTransport(
            configuration: TransportConfiguration(
                port: Int.random(in: 20000..<60000), requestBodyBytesMax: 1 << 20, stateTimeoutSeconds: stateTimeoutSeconds),
            handler: server, webSocketHandler: server)
        do {
            try candidate.start()
            transport = candidate
            break
        } catch {}
    }
    let running = try #require(transport)
    defer {
        running.stop()
        server.close()
    }
    try body(running.boundPort)
}

/// One live transport at a time. Under `swift test` on this loaded 2-core machine, connects to a transport
/// just started fail now and then (ECONNREFUSED, and once EBADF on the test's own new socket: something
/// in the process closed a descriptor it did not own); seen before the realtime work too (2 of 6 runs at
/// commit ab7f1ce), never under strace or when the test binary runs directly. Cause not found yet.
@Suite(.serialized)
struct LiveTransportTests {
    @Test func keepAliveConnectionServesSeveralRequestsWithBodies() throws {
        try withLiveServer { port in
            let body = #"{"a":1}"#
            let request = "PUT /x.json?ns=demo HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                + "GET /x.json?ns=demo HTTP/1.1\r\nHost: localhost\r\n\r\n"
            let reply = try exchange(port: port, request) { $0.components(separatedBy: "HTTP/1.1 200").count == 3 && $0.hasSuffix(body) }
            #expect(reply.components(separatedBy: "HTTP/1.1 200").count == 3)
            #expect(reply.hasSuffix(body))
        }
    }

    @Test func oversizeBodiesAreRefusedAndTheServerGoesOn() throws {
        try withLiveServer { port in
            let reply = try exchange(port: port, "PUT /x.json HTTP/1.1\r\nHost: h\r\nContent-Length: 2000000\r\n\r\n{") {
                $0.contains("}")
            }
            #expect(reply.hasPrefix("HTTP/1.1 413"))
            let next = try exchange(port: port, "GET /x.json HTTP/1.1\r\nHost: h\r\n\r\n") { $0.hasSuffix("null") }
            #expect(next.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func eventStreamsAreChunkedAndLive() throws {
        try withLiveServer { port in
            let reply = try exchange(port: port, "GET /s.json HTTP/1.1\r\nHost: h\r\nAccept: text/event-stream\r\n\r\n") {
                $0.contains("\"data\":null}")
            }
            #expect(reply.hasPrefix("HTTP/1.1 200"))
            #expect(reply.lowercased().contains("transfer-encoding: chunked"))
            #expect(reply.contains("text/event-stream; charset=utf-8"))
            #expect(reply.contains("event: put\ndata: {\"path\":\"/\",\"data\":null}"))
        }
    }

    @Test func eventStreamsOutliveTheStateTimeout() throws {
        try withLiveServer(stateTimeoutSeconds: 1) { port in
            // The stream must still be open, and told of the write, well after the 1 s per-state timeout.
            let writer = Thread {
                Thread.sleep(forTimeInterval: 2.5)
                _ = try? exchange(port: port, "PUT /s.json HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\n7") { $0.contains("\r\n\r\n7") }
            }
            writer.start()
            let reply = try exchange(port: port, "GET /s.json HTTP/1.1\r\nHost: h\r\nAccept: text/event-stream\r\n\r\n") {
                $0.contains("\"data\":7}")
            }
            #expect(reply.contains("event: put\ndata: {\"path\":\"/\",\"data\":7}"))
        }
    }
}

/// The loop's inbox knows its thread: debug builds assert it at the server's entry points
/// (`LoopExecutor.assertOnLoop`), so a call from any other thread stops there instead of racing.
@Test func theInboxTellsTheLoopThreadFromOthers() throws {
    let inbox = Inbox()
    #expect(!inbox.isOnLoop, "no loop yet")
    let answers = Mutex<(onLoop: Bool?, fromLoopAgain: Bool?)>((nil, nil))
    let attached = DispatchSemaphore(value: 0), checked = DispatchSemaphore(value: 0), again = DispatchSemaphore(value: 0)
    let loop = Thread {
        inbox.attach(nil)  // as the transport's loop thread does first (with its libuv wake-up)
        answers.withLock { $0.onLoop = inbox.isOnLoop }
        attached.signal()
        checked.wait()
        answers.withLock { $0.fromLoopAgain = inbox.isOnLoop }
        again.signal()
    }
    loop.start()
    attached.wait()
    #expect(answers.withLock { $0.onLoop } == true)
    #expect(!inbox.isOnLoop, "the test's thread is not the loop")
    checked.signal()
    again.wait()
    #expect(answers.withLock { $0.fromLoopAgain } == true)
}
