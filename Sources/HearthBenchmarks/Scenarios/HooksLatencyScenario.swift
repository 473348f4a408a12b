import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A webhook receiver in the benchmark's process: accepts each delivery (hearth serve posts each on a
/// connection of its own), reads the location's sequence number from `"path":"/lat/N"`, answers 204 and
/// times the delivery from the send time of the write that made it.
final class HookReceiver: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let latenciesMicroseconds = Mutex<[Int32]>([])
    private let running = Atomic<Bool>(true)
    private var thread: Thread?
    private let client: FanoutClient

    init(timingWith client: FanoutClient) throws(ServerHarness.Failure) {
        self.client = client
        (listener, port) = try ServerHarness.listenLoopback(backlog: 1024, for: "hook receiver")
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "hook.receiver"
        self.thread = thread
        thread.start()
    }

    /// Waits until `count` deliveries were timed (or `seconds` pass), then returns and forgets them.
    func collect(expecting count: Int, seconds: Double) -> [Int32] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, latenciesMicroseconds.withLock({ $0.count }) < count { usleep(2_000) }
        return latenciesMicroseconds.withLock { taken in
            defer { taken = [] }
            return taken
        }
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        let answer = Array("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while running.load(ordering: .relaxed) {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            var received: [UInt8] = []
            // The whole request: its head, then Content-Length bytes of body.
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                received += buffer[..<count]
                if let length = Self.completeLength(received), received.count >= length { break }
            }
            let now = client.nowNanoseconds()
            if let sequence = Self.sequence(in: received), case let sent = client.sentAt(sequence), sent > 0 {
                latenciesMicroseconds.withLock { $0.append(Int32(clamping: (now - sent) / 1000)) }
            }
            _ = answer.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
    }

    /// The request's full length once its head has arrived.
    private static func completeLength(_ bytes: [UInt8]) -> Int? {
        let text = String(decoding: bytes.prefix(8192), as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        let head = text[..<end.lowerBound].lowercased()
        guard let field = head.range(of: "content-length:") else { return text[..<end.upperBound].utf8.count }
        let digits = head[field.upperBound...].drop(while: { $0 == " " }).prefix(while: \.isNumber)
        return text[..<end.upperBound].utf8.count + (Int(digits) ?? 0)
    }

    private static func sequence(in bytes: [UInt8]) -> Int? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let marker = text.range(of: "\"path\":\"/lat/") else { return nil }
        return Int(text[marker.upperBound...].prefix(while: \.isNumber))
    }
}

extension Scenario {
    /// 1,000 durable PUTs a second, each to a new location `/lat/N` watched by one webhook
    /// (`/lat/{n}`, created); the time from sending each PUT to the receiver having its delivery (target:
    /// p99 ≤ 50 ms). Reference: one SSE stream on `/lat` receiving the same writes, timed the same way.
    static let hooksLatency = Scenario(
        name: "hooks.latency",
        summary: "1,000 writes/s, each delivered to a webhook: p50/p99 commit-to-receiver latency (target p99 ≤ 50 ms), against an SSE listener"
    ) { context in
        let environment = ProcessInfo.processInfo.environment
        let writesPerSecond = Int(environment["HEARTH_BENCH_HOOK_WRITES_PER_SECOND"] ?? "") ?? 1_000
        let seconds = Double(environment["HEARTH_BENCH_HOOK_SECONDS"] ?? "") ?? 5
        let writesPerRun = Int(seconds * Double(writesPerSecond))
        let intervalNanoseconds = 1_000_000_000 / writesPerSecond

        let hearth = try ServerHarness.startHearth(name: "hooks-latency")
        defer {
            ServerHarness.stop(hearth.process)
            try? FileManager.default.removeItem(atPath: hearth.directory)
        }
        try ServerHarness.request(port: hearth.port, "PUT", "/lat.json?ns=bench", body: "0")
        let client = FanoutClient()
        try client.open(count: 1, port: hearth.port, request: "GET /lat.json?ns=bench HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        client.start()
        defer { client.stop() }
        try client.waitForInitialEvents(1, seconds: 30)
        let receiver = try HookReceiver(timingWith: client)
        defer { receiver.stop() }
        let document = #"{"hooks":{"lat":{"path":"/lat/{n}","events":["created"],"url":"http://127.0.0.1:\#(receiver.port)/hook","secret":"hooks-latency-benchmark"}}}"#
        let deployed = try ServerHarness.request(port: hearth.port, "PUT", "/.settings/hooks.json?ns=bench", body: document, credential: "owner")
        guard deployed == 200 else { throw ServerHarness.Failure("deploying the hook answered \(deployed)") }
        print("   one webhook on /lat/{n} (created), one SSE stream on /lat; \(writesPerRun) writes per run, \(writesPerSecond) a second")

        struct Statistics {
            var p50: Double, p99: Double, max: Double, delivered: Int
            init(_ latencies: [Int32]) {
                let sorted = latencies.sorted()
                func percentile(_ p: Double) -> Double {
                    sorted.isEmpty ? .infinity : Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
                }
                (p50, p99, max, delivered) = (percentile(0.5), percentile(0.99), Double(sorted.last ?? 0) / 1000, sorted.count)
            }
            func line(_ label: String) -> String {
                "\(label.padding(toLength: 22)) p50 \(rounded(p50, places: 2)) ms  p99 \(rounded(p99, places: 2)) ms  max \(rounded(max, places: 1)) ms  delivered \(delivered)"
            }
        }
        let writer = OpenLoopWriter(port: hearth.port)
        var sequence = 1
        var hooks: [Statistics] = [], listeners: [Statistics] = []
        for run in 0...context.configuration.measuredRunCount {
            let start = ContinuousClock.now
            for index in 0..<writesPerRun {
                client.markSent(sequence)
                try writer.put("/lat/\(sequence).json?ns=bench&print=silent", body: String(sequence))
                sequence += 1
                let next = start + .nanoseconds(intervalNanoseconds * (index + 1))
                let now = ContinuousClock.now
                if next > now { Thread.sleep(forTimeInterval: (next - now).seconds) }
            }
            let rate = Double(writesPerRun) / (ContinuousClock.now - start).seconds
            try writer.finish()
            let hook = Statistics(receiver.collect(expecting: writesPerRun, seconds: 30))
            let listener = Statistics(client.collect(expecting: writesPerRun, seconds: 10).latencies)
            let label = run == 0 ? "warm-up" : "run \(run)/\(context.configuration.measuredRunCount)"
            print("   \(label.padding(toLength: 9)) \(Int(rate)) writes/s of \(writesPerRun)")
            print("      " + hook.line("webhook"))
            print("      " + listener.line("SSE listener"))
            if hook.delivered < writesPerRun { print("      \(writesPerRun - hook.delivered) deliveries missing 30 s after the last write") }
            if run > 0 {
                hooks.append(hook)
                listeners.append(listener)
            }
        }
        let hook = hooks.sorted { $0.p99 < $1.p99 }[hooks.count / 2]
        let listener = listeners.sorted { $0.p99 < $1.p99 }[listeners.count / 2]
        print("   median    " + hook.line("webhook"))
        print("             " + listener.line("SSE listener"))
        return BenchmarkResult(
            scenario: "hooks.latency", metric: "p99 write-to-webhook-receiver latency, \(writesPerSecond) writes/s, one hook",
            value: hook.p99, unit: "ms", reference: "an SSE listener on the writes' parent, the same writes, timed the same way",
            referenceValue: listener.p99,
            extras: [("p50ms", hook.p50), ("maxMs", hook.max), ("referenceP50ms", listener.p50), ("delivered", Double(hook.delivered)),
                     ("expected", Double(writesPerRun))])
    }
}
