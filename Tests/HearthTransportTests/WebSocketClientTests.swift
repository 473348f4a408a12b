import Foundation
import HearthWebSocketClient
import Synchronization
import Testing

@testable import HearthTransport

/// Collects a client's events and waits for them.
final class EventRecorder: Sendable {
    private let events = Mutex<[WebSocketClientEvent]>([])
    func record(_ event: WebSocketClientEvent) { events.withLock { $0.append(event) } }
    var all: [WebSocketClientEvent] { events.withLock { $0 } }
    var messages: [String] {
        all.compactMap { if case .message(let bytes) = $0 { String(decoding: bytes, as: UTF8.self) } else { nil } }
    }

    /// Waits up to 5 s for `condition` over the events so far.
    func wait(_ condition: ([WebSocketClientEvent]) -> Bool) async -> Bool {
        for _ in 0..<500 {
            if condition(all) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

@Test func theWebSocketClientTalksToTheRealtimeEndpoint() async throws {
    try await withLiveServerAsync { port in
        let recorder = EventRecorder()
        let client = WebSocketClient(url: URL(string: "ws://127.0.0.1:\(port)/.ws?ns=demo&v=5")!) { recorder.record($0) }
        client.connect()
        #expect(await recorder.wait { $0.first == .opened && $0.count >= 2 })
        #expect(recorder.messages.first?.hasPrefix(#"{"t":"c","d":{"t":"h""#) == true)
        client.send(Array(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/x","d":"hello"}}}"#.utf8))
        client.send(Array(#"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/x","h":""}}}"#.utf8))
        #expect(await recorder.wait { _ in recorder.messages.contains { $0.contains(#""r":2,"#) } })
        // The listen may be answered before the put is durable (null first, then the push): wait for it.
        #expect(await recorder.wait { _ in recorder.messages.contains(#"{"t":"d","d":{"a":"d","b":{"p":"x","d":"hello"}}}"#) })
        client.close()
        #expect(await recorder.wait { if case .closed? = $0.last { true } else { false } })
        client.send(Array("dropped".utf8))  // after close: ignored
    }
}

@Test func aRefusedConnectionIsReportedAsClosed() async throws {
    let recorder = EventRecorder()
    // Nothing listens on port 1.
    let client = WebSocketClient(url: URL(string: "ws://127.0.0.1:1/.ws")!) { recorder.record($0) }
    client.connect()
    #expect(await recorder.wait { if case .closed? = $0.last { true } else { false } })
    #expect(!recorder.all.contains(.opened))
}

/// `withLiveServer` for async bodies.
func withLiveServerAsync(_ body: (Int) async throws -> Void) async throws {
    var port = 0
    let server = try startedServerForClientTests()
    port = server.transport.boundPort
    defer { server.stop() }
    try await body(port)
}

import HearthServer
import HearthStorage

struct StartedServer {
    let server: DatabaseServer
    let transport: HTTPServerTransport
    func stop() {
        transport.stop()
        server.close()
    }
}

func startedServerForClientTests() throws -> StartedServer {
    let server = DatabaseServer(
        configuration: ServerConfiguration(emulator: true, adminToken: nil, defaultNamespace: "demo"),
        openEngine: { _ in InMemoryStorageEngine() })
    for _ in 0..<20 {
        let candidate = HTTPServerTransport(
            configuration: TransportConfiguration(port: Int.random(in: 20000..<60000)), handler: server, webSocketHandler: server)
        do {
            try candidate.start()
            return StartedServer(server: server, transport: candidate)
        } catch {}
    }
    throw ConnectFailed(port: 0, errno: 0)
}
