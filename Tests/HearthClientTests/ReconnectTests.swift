import Foundation
import HearthCore
import Synchronization
import Testing

@testable import HearthClient

@Suite(.serialized) struct ReconnectTests {
    /// A server killed and restarted while another client writes about 500 times a second: the listener
    /// reconnects, restores its listen, and ends with exactly the server's tree.
    @Test func aListenerConvergesAfterTheServerIsKilledAndRestartedUnderWrites() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let listener = makeDatabase(server, namespace: "restart")
        let writer = makeDatabase(server, namespace: "restart")
        for database in [listener, writer] { database.repo.setReconnectDelay(minimum: 0.05, maximum: 0.3) }
        let latest = Recorder<String>()
        listener.reference(withPath: "load").observe(.value) { latest.append(json($0)) }
        let acknowledged = Recorder<Bool>()
        // 500 writes a second for 3 s, the server restarted after the first second, paced on a thread of
        // its own: the test runner's shared threads can be busy for seconds on a loaded 2-core machine.
        let total = 1_500
        let restartError = Mutex<(any Error)?>(nil)
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            Thread {
                let start = Date()
                var written = 0
                while written < total {
                    // Each turn catches up with the clock, whatever the sleeps' granularity.
                    let due = min(total, Int(Date().timeIntervalSince(start) * 500))
                    while written < due {
                        let index = written
                        writer.reference(withPath: "load/k\(index % 50)").setValue(index) { error, _ in acknowledged.append(error == nil) }
                        written += 1
                        if written == 500 {
                            do { try server.restart() } catch { restartError.withLock { $0 = error } }
                        }
                    }
                    Thread.sleep(forTimeInterval: 0.002)
                }
                finished.resume()
            }.start()
        }
        if let error = restartError.withLock({ $0 }) { throw error }
        #expect(await acknowledged.wait(seconds: 30) { $0.count == total })
        #expect(acknowledged.all.allSatisfy { $0 })
        let (status, serverTree) = try server.rest("GET", "/load", namespace: "restart")
        #expect(status == 200)
        #expect(await latest.wait(seconds: 15) { $0.last == serverTree })
        // And the last write of each key is what both hold.
        let tree = try Node(json: serverTree)
        for key in 0..<50 {
            let last = (0..<total).last { $0 % 50 == key }
            #expect(tree.child(at: Path("k\(key)")).numberValue == last.map(Double.init))
        }
    }

    @Test func aServerThatSendsGarbageIsReconnectedToNotCrashedOn() async throws {
        // A fake endpoint: accepts the WebSocket, then sends frames no server sends.
        let garbage = Recorder<Int>()
        let database = makeDatabase(try TestServer(), namespace: "garbage")
        database.useTransport { url, events in GarbageTransport(events: events, counter: garbage) }
        database.repo.setReconnectDelay(minimum: 0.02, maximum: 0.05)
        let values = Recorder<String>()
        database.reference(withPath: "x").observe(.value) { values.append(json($0)) }
        // Several connections come and go; the process is still here and the listener still registered.
        #expect(await garbage.wait { $0.count >= 3 })
        database.goOffline()
        #expect(values.all.isEmpty)
    }
}

/// A transport whose server answers with nonsense: frames that are not JSON, a count frame announcing
/// more frames than come, a handshake with wrong types, then closes.
final class GarbageTransport: RealtimeTransport, @unchecked Sendable {
    private let events: @Sendable (TransportEvent) -> Void
    private let counter: Recorder<Int>

    init(events: @escaping @Sendable (TransportEvent) -> Void, counter: Recorder<Int>) {
        self.events = events
        self.counter = counter
    }

    func connect() {
        counter.append(1)
        DispatchQueue.global().async { [events] in
            events(.opened)
            for frame in ["not json", #"{"t":"c","d":{"t":"h","d":{"ts":"soon","s":7}}}"#, "3", "{", #"{"t":"d","d":{"r":"x"}}"#,
                          #"{"t":"d","d":{"a":"d","b":{"p":"x","d":[1,2,{"a":"#, String(repeating: "9", count: 40)] {
                events(.message(Array(frame.utf8)))
            }
            events(.closed(reason: "garbage done"))
        }
    }

    func send(_ text: [UInt8]) {}
    func close() {}
}
