import Dispatch
import Foundation
import HearthCLI
import HearthClient
import HearthCore
import HearthTransport
import HearthWebSocketClient
import HearthWire
import Synchronization

/// The Swift SDK (HearthClient) against a real `hearth serve`, each beside a bare reference measured in the
/// same invocation: two queue hops for local events, a bare WebSocket client (HearthTransport's, frames
/// parsed with HearthCore) for sync and round trips, JSONSerialization for the cold cache.
enum ClientBench {
    /// A database of its own app (so each is a separate client), callbacks on a private queue.
    static func database(port: Int, namespace: String, persistence: Bool = false) -> Database {
        let name = "bench-\(UUID().uuidString)"
        let options = FirebaseOptions(googleAppID: "bench", gcmSenderID: "")
        options.databaseURL = "http://127.0.0.1:\(port)?ns=\(namespace)"
        FirebaseApp.configure(name: name, options: options)
        let database = Database.database(app: FirebaseApp.app(name: name)!)
        database.isPersistenceEnabled = persistence
        database.callbackQueue = DispatchQueue(label: "bench.callbacks.\(name)")
        return database
    }

    /// Waits (blocking the benchmark's thread) until `body` signals, or fails after `seconds`.
    static func wait(seconds: Double = 60, _ what: String, _ body: (@escaping @Sendable () -> Void) -> Void) throws(ServerHarness.Failure) {
        let done = DispatchSemaphore(value: 0)
        body { done.signal() }
        if done.wait(timeout: .now() + seconds) == .timedOut { throw ServerHarness.Failure("timed out waiting for \(what)") }
    }

    /// A bare realtime client: a WebSocket, the handshake awaited, frames reassembled and parsed.
    final class BareClient: @unchecked Sendable {  // `messages` is locked; the socket is thread-safe
        private let socket: WebSocketClient
        private let inbox: Inbox

        /// What the socket's thread hands over: whole messages, and a signal per message.
        final class Inbox: Sendable {
            let messages = Mutex<[[UInt8]]>([])
            let arrived = DispatchSemaphore(value: 0)
            let assembler = Mutex(WireFrameAssembler(messageBytesMax: 64 << 20))
        }

        init(port: Int, namespace: String) throws(ServerHarness.Failure) {
            let url = URL(string: "ws://127.0.0.1:\(port)/.ws?v=5&ns=\(namespace)")!
            let inbox = Inbox()
            self.inbox = inbox
            socket = WebSocketClient(url: url) { event in
                guard case .message(let frame) = event else { return }
                if let message = inbox.assembler.withLock({ try? $0.receive(frame) }) ?? nil {
                    inbox.messages.withLock { $0.append(message) }
                    inbox.arrived.signal()
                }
            }
            socket.connect()
            _ = try next(containing: #""t":"h""#)
        }

        /// The next message containing `marker` (earlier ones are dropped).
        func next(containing marker: String, seconds: Double = 60) throws(ServerHarness.Failure) -> [UInt8] {
            let needle = Array(marker.utf8)
            let deadline = DispatchTime.now() + seconds
            while true {
                let found = inbox.messages.withLock { list -> [UInt8]? in
                    while !list.isEmpty {
                        let first = list.removeFirst()
                        if first.firstRange(of: needle) != nil { return first }
                    }
                    return nil
                }
                if let found { return found }
                if inbox.arrived.wait(timeout: deadline) == .timedOut { throw ServerHarness.Failure("no message with \(marker)") }
            }
        }

        func send(_ text: String) { socket.send(Array(text.utf8)) }
        func close() { socket.close() }
    }

    static func percentile(_ values: [Double], _ q: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
    }
}

extension Scenario {
    static let clientLocal = Scenario(
        name: "client.local",
        summary: "HearthClient: a local setValue to its local event with 1,000 listeners attached (p99); two queue hops alongside"
    ) { context in
        let server = try ServerHarness.startHearth(name: "client-local")
        defer { ServerHarness.stop(server.process) }
        let database = ClientBench.database(port: server.port, namespace: "local")
        let listeners = 1_000
        let latest = Mutex<(index: Int, at: Int64)>((-1, 0))
        let arrived = DispatchSemaphore(value: 0)
        for index in 0..<listeners {
            database.reference(withPath: "bench/l\(index)").observe(.value) { snapshot in
                guard let value = snapshot.value as? Int, value >= 0 else { return }
                latest.withLock { $0 = (value, monotonicNanoseconds()) }
                arrived.signal()
            }
        }
        // Every listener's first (empty) value event, so none arrives during the measurement.
        try ClientBench.wait("the listeners to attach") { done in database.reference(withPath: "bench/l0").getData { _, _ in done() } }
        Thread.sleep(forTimeInterval: 1)
        let writes = 3_000
        // The reference: the two hops every local event makes (to a serial queue, then to the callback
        // queue), with no SDK work between them.
        let work = DispatchQueue(label: "bench.reference.work"), callbacks = DispatchQueue(label: "bench.reference.callbacks")
        func twoHops() -> Double {
            let start = monotonicNanoseconds()
            let done = DispatchSemaphore(value: 0)
            let end = Mutex<Int64>(0)
            work.async { callbacks.async { end.withLock { $0 = monotonicNanoseconds() }; done.signal() } }
            done.wait()
            return Double(end.withLock { $0 } - start) / 1_000
        }
        /// Writes one value per listener in turn, each waiting for its local event; returns the latencies,
        /// and the two hops timed after each write, under the same load (the server and the client's
        /// network work on the same two cores).
        func measureLocalEvents(offset: Int) throws -> (events: [Double], hops: [Double]) {
            var latencies: [Double] = [], hops: [Double] = []
            for step in 0..<writes {
                let index = offset + step
                let start = monotonicNanoseconds()
                database.reference(withPath: "bench/l\(index % listeners)").setValue(index)
                while true {
                    if arrived.wait(timeout: .now() + 10) == .timedOut { throw ServerHarness.Failure("no local event for write \(index)") }
                    let (seen, at) = latest.withLock { $0 }
                    if seen == index {
                        if step >= 200 { latencies.append(Double(at - start) / 1_000) }
                        break
                    }
                }
                let hop = twoHops()
                if step >= 200 { hops.append(hop) }
            }
            return (latencies, hops)
        }
        // Online: every write also goes to the server, whose answers and pushes the client handles meanwhile.
        let (latencies, loadedHops) = try measureLocalEvents(offset: 0)
        // Offline: the local path alone (setValue, the write applied, 1,000 listeners' views consulted,
        // the event delivered), without the connection's work competing for the two cores.
        database.goOffline()
        Thread.sleep(forTimeInterval: 0.5)
        let offline = try measureLocalEvents(offset: writes).events
        // The same hops on a quiet machine: what they cost with nothing else running.
        var hops: [Double] = []
        for index in 0..<writes {
            let hop = twoHops()
            if index >= 200 { hops.append(hop) }
        }
        let p99 = ClientBench.percentile(latencies, 0.99), p50 = ClientBench.percentile(latencies, 0.5)
        let offlineP99 = ClientBench.percentile(offline, 0.99), offlineP50 = ClientBench.percentile(offline, 0.5)
        let referenceP99 = ClientBench.percentile(loadedHops, 0.99), quietP99 = ClientBench.percentile(hops, 0.99)
        print("   HearthClient local event online:  p50 \(String(format: "%.1f", p50)) µs, p99 \(String(format: "%.1f", p99)) µs over \(latencies.count) writes, \(listeners) listeners")
        print("   HearthClient local event offline: p50 \(String(format: "%.1f", offlineP50)) µs, p99 \(String(format: "%.1f", offlineP99)) µs")
        print("   two queue hops, online load:      p50 \(String(format: "%.1f", ClientBench.percentile(loadedHops, 0.5))) µs, p99 \(String(format: "%.1f", referenceP99)) µs")
        print("   two queue hops, quiet:            p50 \(String(format: "%.1f", ClientBench.percentile(hops, 0.5))) µs, p99 \(String(format: "%.1f", quietP99)) µs")
        return BenchmarkResult(
            scenario: "client.local", metric: "local event latency p99", value: p99, unit: "µs",
            reference: "two DispatchQueue hops, timed between the same writes", referenceValue: referenceP99,
            extras: [("p50", p50), ("offlineP50", offlineP50), ("offlineP99", offlineP99), ("quietHopsP99", quietP99)])
    }

    static let clientSync = Scenario(
        name: "client.sync",
        summary: "HearthClient: first value event of a 10,000-child listen (about 5 MB); a bare WebSocket client receiving and parsing the same frames alongside"
    ) { context in
        let server = try ServerHarness.startHearth(name: "client-sync")
        defer { ServerHarness.stop(server.process) }
        var document: [UInt8] = [UInt8(ascii: "{")]
        for index in 0..<10_000 {
            if index > 0 { document.append(UInt8(ascii: ",")) }
            document += Array(#""item\#(index)":{"text":"\#(String(repeating: "x", count: 460))","n":\#(index)}"#.utf8)
        }
        document.append(UInt8(ascii: "}"))
        try ServerHarness.request(port: server.port, "PUT", "/sync.json?ns=sync", body: String(decoding: document, as: UTF8.self))
        print("   data: \(document.count) bytes in 10,000 children")
        let hearth = try context.measure("HearthClient first value event") { () throws(ServerHarness.Failure) in
            let database = ClientBench.database(port: server.port, namespace: "sync")
            try ClientBench.wait("the value event") { done in
                database.reference(withPath: "sync").observeSingleEvent(of: .value) { snapshot in
                    if snapshot.childrenCount == 10_000 { done() }
                }
            }
            database.goOffline()
        }
        let bare = try context.measure("bare WebSocket + parse") { () throws(ServerHarness.Failure) in
            let client = try ClientBench.BareClient(port: server.port, namespace: "sync")
            client.send(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/sync","h":""}}}"#)
            let push = try client.next(containing: #""a":"d""#)
            guard let node = try? Node(jsonBytes: push), node.child(at: Path("d/b/d")).childCount == 10_000 else {
                throw ServerHarness.Failure("the bare client did not get the data")
            }
            _ = try client.next(containing: #""r":1"#)
            client.close()
        }
        return BenchmarkResult(
            scenario: "client.sync", metric: "first value event of 10,000 children", value: hearth.median.seconds * 1000, unit: "ms",
            reference: "bare WebSocket client + HearthCore parse", referenceValue: bare.median.seconds * 1000)
    }

    static let clientRoundTrip = Scenario(
        name: "client.roundtrip",
        summary: "HearthClient: setValue(_:) async until acknowledged (p50); a bare WebSocket put/ack round trip alongside"
    ) { context in
        let server = try ServerHarness.startHearth(name: "client-roundtrip")
        defer { ServerHarness.stop(server.process) }
        let count = 2_000
        let database = ClientBench.database(port: server.port, namespace: "roundtrip")
        let ref = database.reference(withPath: "rt/value")
        var sdk: [Double] = []
        for index in 0..<(count + 100) {
            let start = monotonicNanoseconds()
            try ClientBench.wait("an acknowledgement") { done in ref.setValue(index) { _, _ in done() } }
            if index >= 100 { sdk.append(Double(monotonicNanoseconds() - start) / 1_000) }
        }
        database.goOffline()
        let client = try ClientBench.BareClient(port: server.port, namespace: "roundtrip")
        var bare: [Double] = []
        for index in 0..<(count + 100) {
            let start = monotonicNanoseconds()
            client.send(#"{"t":"d","d":{"r":\#(index + 1),"a":"p","b":{"p":"/rt/bare","d":\#(index)}}}"#)
            _ = try client.next(containing: #""r":\#(index + 1),"#)
            if index >= 100 { bare.append(Double(monotonicNanoseconds() - start) / 1_000) }
        }
        client.close()
        let p50 = ClientBench.percentile(sdk, 0.5), bareP50 = ClientBench.percentile(bare, 0.5)
        print("   HearthClient: p50 \(String(format: "%.0f", p50)) µs, p99 \(String(format: "%.0f", ClientBench.percentile(sdk, 0.99))) µs")
        print("   bare:         p50 \(String(format: "%.0f", bareP50)) µs, p99 \(String(format: "%.0f", ClientBench.percentile(bare, 0.99))) µs")
        return BenchmarkResult(
            scenario: "client.roundtrip", metric: "acknowledged write p50", value: p50, unit: "µs",
            reference: "bare WebSocket put/ack", referenceValue: bareP50,
            extras: [("p99", ClientBench.percentile(sdk, 0.99))])
    }

    static let clientOffline = Scenario(
        name: "client.offline",
        summary: "HearthClient: a cold start serving a 100,000-leaf cached listen from disk, offline; JSONSerialization parsing the same JSON alongside"
    ) { context in
        let server = try ServerHarness.startHearth(name: "client-offline")
        let cache = ServerHarness.temporaryDirectory("client-offline-cache")
        setenv("HEARTH_CLIENT_CACHE_DIR", cache, 1)
        var document: [UInt8] = [UInt8(ascii: "{")]
        for index in 0..<100_000 {
            if index > 0 { document.append(UInt8(ascii: ",")) }
            document += Array(#""leaf\#(index)":"value \#(index)""#.utf8)
        }
        document.append(UInt8(ascii: "}"))
        try ServerHarness.request(port: server.port, "PUT", "/cached.json?ns=offline", body: String(decoding: document, as: UTF8.self))
        // Cache it: one online run with persistence.
        let warm = ClientBench.database(port: server.port, namespace: "offline", persistence: true)
        try ClientBench.wait("the first load") { done in
            warm.reference(withPath: "cached").observeSingleEvent(of: .value) { _ in done() }
        }
        warm.reference(withPath: "cached").keepSynced(true)
        Thread.sleep(forTimeInterval: 2)  // the cache is written behind
        warm.goOffline()
        ServerHarness.stop(server.process)
        var heapPerLeaf: [Double] = []
        let hearth = try context.measure("HearthClient cold start from disk") { () throws(ServerHarness.Failure) in
            ProcessHeap.trim()
            let before = ProcessHeap.mainArenaBytesInUse()
            let database = ClientBench.database(port: server.port, namespace: "offline", persistence: true)
            database.goOffline()
            let kept = Mutex<DataSnapshot?>(nil)
            try ClientBench.wait("the cached value") { done in
                database.reference(withPath: "cached").observeSingleEvent(of: .value) { snapshot in
                    kept.withLock { $0 = snapshot }
                    if snapshot.childrenCount == 100_000 { done() }
                }
            }
            let after = ProcessHeap.mainArenaBytesInUse()
            heapPerLeaf.append(Double(after - before) / 100_000)
            withExtendedLifetime(kept) {}
        }
        let reference = context.measure("JSONSerialization parse") {
            _ = try? JSONSerialization.jsonObject(with: Data(document))
        }
        let perLeafJSON = Double(document.count) / 100_000
        // The same data as HearthCore's tree alone: what the SDK adds is the difference.
        ProcessHeap.trim()
        let beforeNode = ProcessHeap.mainArenaBytesInUse()
        let node = try? Node(jsonBytes: document)
        let nodePerLeaf = Double(ProcessHeap.mainArenaBytesInUse() - beforeNode) / 100_000
        withExtendedLifetime(node) {}
        let heap = heapPerLeaf.sorted()[heapPerLeaf.count / 2]
        print("   heap per cached leaf: \(String(format: "%.0f", heap)) bytes (JSON: \(String(format: "%.0f", perLeafJSON)) bytes, ratio \(String(format: "%.2f", heap / perLeafJSON)); HearthCore's tree alone: \(String(format: "%.1f", nodePerLeaf)) bytes)")
        return BenchmarkResult(
            scenario: "client.offline", metric: "cold start to cached value", value: hearth.median.seconds * 1000, unit: "ms",
            reference: "JSONSerialization parse of the same JSON", referenceValue: reference.median.seconds * 1000,
            extras: [("heapBytesPerLeaf", heap), ("jsonBytesPerLeaf", perLeafJSON), ("nodeBytesPerLeaf", nodePerLeaf)])
    }
}
