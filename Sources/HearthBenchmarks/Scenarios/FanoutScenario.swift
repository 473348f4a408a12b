import CEpoll  // SOCK_STREAM and IPPROTO_TCP (through <sys/socket.h>, <netinet/tcp.h>)
import Foundation
import HearthTesting
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// The reading side of `sse.fanout`: thousands of event streams on one poll(2) thread, each event's sequence
/// number read from its `"data":N` and timed against when that write was sent.
final class FanoutClient: @unchecked Sendable {
    private struct Stream {
        var fd: Int32
        var tail: [UInt8] = []
    }

    private var streams: [Stream] = []
    /// Send time (ContinuousClock nanoseconds since `origin`) of each sequence number; written before the
    /// write is sent, read after a delivery of it arrived.
    private let sendTimes: UnsafeMutablePointer<Int64>
    let sequenceCapacity = 1 << 20
    let origin = ContinuousClock.now
    private let state = Mutex(Collected())
    private var thread: Thread?
    private let running = Atomic<Bool>(true)

    struct Collected: Sendable {
        var latenciesMicroseconds: [Int32] = []
        var initialEvents = 0
        var closedStreams = 0
    }

    init() {
        sendTimes = .allocate(capacity: sequenceCapacity)
        sendTimes.initialize(repeating: 0, count: sequenceCapacity)
    }

    deinit { sendTimes.deallocate() }

    func nowNanoseconds() -> Int64 {
        let elapsed = ContinuousClock.now - origin
        let (seconds, attoseconds) = elapsed.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    func markSent(_ sequence: Int) { sendTimes[sequence] = nowNanoseconds() }

    /// When `sequence` was marked sent, on ``nowNanoseconds()``'s clock (0: never).
    func sentAt(_ sequence: Int) -> Int64 { sequence > 0 && sequence < sequenceCapacity ? sendTimes[sequence] : 0 }

    /// Opens `count` connections to `port`, sends `request` on each and watches them.
    func open(count: Int, port: Int, request: String) throws(ServerHarness.Failure) {
        let bytes = Array(request.utf8)
        for index in 0..<count {
            // Spread over 127.0.0.x source addresses so that no one address runs out of ephemeral ports.
            let fd = ServerHarness.connectLoopback(port: port, source: 0x7F00_0001 + UInt32(index / 10_000))
            guard fd >= 0 else { throw ServerHarness.Failure("stream \(index): cannot connect: \(String(cString: strerror(errno)))") }
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == bytes.count else { throw ServerHarness.Failure("stream \(index): cannot send the request") }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            streams.append(Stream(fd: fd))
        }
    }

    func start() {
        let thread = Thread { [self] in self.readLoop() }
        thread.name = "fanout.reader"
        self.thread = thread
        thread.start()
    }

    /// Waits until `count` initial events (sequence 0) arrived.
    func waitForInitialEvents(_ count: Int, seconds: Double) throws(ServerHarness.Failure) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let (initial, closed) = state.withLock { ($0.initialEvents, $0.closedStreams) }
            if initial >= count { return }
            if closed > 0 { throw ServerHarness.Failure("\(closed) streams were closed before their first event") }
            usleep(10_000)
        }
        let initial = state.withLock { $0.initialEvents }
        throw ServerHarness.Failure("only \(initial) of \(count) streams got their first event within \(Int(seconds)) s")
    }

    /// Waits until `count` deliveries were timed (or `seconds` pass), then returns and forgets them.
    func collect(expecting count: Int, seconds: Double) -> (latencies: [Int32], closed: Int) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, state.withLock({ $0.latenciesMicroseconds.count }) < count { usleep(2_000) }
        return state.withLock { collected in
            let taken = collected.latenciesMicroseconds
            collected.latenciesMicroseconds = []
            collected.latenciesMicroseconds.reserveCapacity(count)
            return (taken, collected.closedStreams)
        }
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        thread = nil
        usleep(100_000)
        for stream in streams { close(stream.fd) }
        streams = []
    }

    private func readLoop() {
        var watched = streams.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var latencies: [Int32] = []
        var initial = 0, closed = 0
        while running.load(ordering: .relaxed) {
            let ready = watched.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), 50) }
            if ready <= 0 { continue }
            for slot in watched.indices where watched[slot].revents != 0 {
                watched[slot].revents = 0
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(streams[slot].fd, $0.baseAddress, $0.count) }
                    if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
                        watched[slot].fd = -1
                        closed += 1
                        break
                    }
                    if count < 0 { break }
                    let now = nowNanoseconds()
                    scan(slot, buffer[..<count], now: now, latencies: &latencies, initial: &initial)
                    if count < buffer.count { break }
                }
            }
            if !latencies.isEmpty || initial > 0 || closed > 0 {
                state.withLock {
                    $0.latenciesMicroseconds.append(contentsOf: latencies)
                    $0.initialEvents += initial
                    $0.closedStreams += closed
                }
                latencies.removeAll(keepingCapacity: true)
                initial = 0
                closed = 0
            }
        }
    }

    private static let pattern = Array(#"data":"#.utf8)

    /// Finds every `data":N` in what this stream sent (keeping a partial one for the next read).
    private func scan(_ slot: Int, _ input: ArraySlice<UInt8>, now: Int64, latencies: inout [Int32], initial: inout Int) {
        if streams[slot].tail.isEmpty {
            input.withUnsafeBufferPointer { scan(slot, $0, now: now, latencies: &latencies, initial: &initial) }
        } else {
            let joined = streams[slot].tail + input
            joined.withUnsafeBufferPointer { scan(slot, $0, now: now, latencies: &latencies, initial: &initial) }
        }
    }

    private func scan(_ slot: Int, _ bytes: UnsafeBufferPointer<UInt8>, now: Int64, latencies: inout [Int32], initial: inout Int) {
        let pattern = Self.pattern
        var position = 0
        var keepFrom = max(0, bytes.count - (pattern.count - 1))
        search: while position + pattern.count <= bytes.count {
            if bytes[position] == pattern[0] && bytes[position + 1] == pattern[1] && bytes[position + 2] == pattern[2]
                && bytes[position + 3] == pattern[3] && bytes[position + 4] == pattern[4] && bytes[position + 5] == pattern[5]
            {
                var cursor = position + pattern.count
                var value = 0
                while cursor < bytes.count, bytes[cursor] >= 48, bytes[cursor] <= 57 {
                    value = value * 10 + Int(bytes[cursor] - 48)
                    cursor += 1
                }
                if cursor == bytes.count {
                    keepFrom = position
                    break search
                }
                if value == 0 {
                    initial += 1
                } else if value < sequenceCapacity {
                    latencies.append(Int32(clamping: (now - sendTimes[value]) / 1000))
                }
                position = cursor
                keepFrom = max(position, bytes.count - (pattern.count - 1))
            } else {
                position += 1
            }
        }
        streams[slot].tail = keepFrom < bytes.count ? Array(bytes[keepFrom...]) : []
    }
}

/// A fan-out with nothing behind it: the benchmark accepts the streams itself and writes each event's bytes
/// to every socket in a loop. What the machine and the reading side allow; the reference for `sse.fanout`.
final class RawFanout: @unchecked Sendable {
    let listener: Int32
    let port: Int
    private var sockets: [Int32] = []
    private let lock = NSLock()

    init() throws(ServerHarness.Failure) {
        (listener, port) = try ServerHarness.listenLoopback(backlog: 4096, for: "raw fan-out")
    }

    /// Accepts `count` connections on a thread of its own (the client connects meanwhile).
    func accept(count: Int) -> Thread {
        let thread = Thread { [self] in
            for _ in 0..<count {
                let fd = Glibc.accept(listener, nil, nil)
                guard fd >= 0 else { continue }
                var one: Int32 = 1
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                lock.lock()
                sockets.append(fd)
                lock.unlock()
            }
        }
        thread.start()
        return thread
    }

    var acceptedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return sockets.count
    }

    /// Writes one chunked SSE event carrying `value` to every socket, as Hearth would frame it.
    func broadcast(_ value: Int) {
        let event = "event: put\ndata: {\"path\":\"/\",\"data\":\(value)}\n\n"
        let bytes = Array((String(event.utf8.count, radix: 16) + "\r\n" + event + "\r\n").utf8)
        lock.lock()
        let targets = sockets
        lock.unlock()
        bytes.withUnsafeBytes { raw in
            for fd in targets { _ = write(fd, raw.baseAddress, raw.count) }
        }
    }

    func close() {
        for fd in sockets { Glibc.close(fd) }
        sockets = []
        Glibc.close(listener)
    }
}

extension Scenario {
    /// 5,000 SSE streams on one location, one durable PUT there every 10 ms; the time from sending each
    /// PUT to each stream's receipt of its event. Reference: the same client reading the same bytes written
    /// by a bare loop over 5,000 sockets.
    static let sseFanout = Scenario(
        name: "sse.fanout",
        summary: "One write per 10 ms delivered to 5,000 SSE streams: p99 write-to-delivery latency"
    ) { context in
        let environment = ProcessInfo.processInfo.environment
        return try sseLatency(
            context, scenario: "sse.fanout", streamCount: Int(environment["HEARTH_BENCH_STREAMS"] ?? "") ?? 5_000, writesPerSecond: 100)
    }

    /// 1,000 SSE streams, 50 durable PUTs a second: the latency a dashboard of streams sees at a moderate
    /// write rate (target p99 ≤ 10 ms). Same client and reference as sse.fanout.
    static let sseLatency = Scenario(
        name: "sse.latency",
        summary: "50 writes/s delivered to 1,000 SSE streams: p99 write-to-delivery latency (target ≤ 10 ms)"
    ) { context in
        let environment = ProcessInfo.processInfo.environment
        return try sseLatency(
            context, scenario: "sse.latency", streamCount: Int(environment["HEARTH_BENCH_STREAMS"] ?? "") ?? 1_000, writesPerSecond: 50)
    }

    /// `streamCount` SSE streams on one location of the real server, one durable PUT there every
    /// 1/`writesPerSecond` s (open loop); each delivery timed from its PUT's send. Reference: the same
    /// client reading the same bytes from a bare write loop over as many sockets.
    static func sseLatency(_ context: BenchmarkContext, scenario: String, streamCount: Int, writesPerSecond: Int) throws -> BenchmarkResult {
        let environment = ProcessInfo.processInfo.environment
        let seconds = Double(environment["HEARTH_BENCH_FANOUT_SECONDS"] ?? "") ?? 3
        let writesPerRun = Int(seconds * Double(writesPerSecond))
        let intervalMicroseconds = 1_000_000 / writesPerSecond
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard Int(limit.rlim_cur) > streamCount + 100 else {
            throw ServerHarness.Failure("this process may open only \(limit.rlim_cur) files; \(streamCount) streams need more (ulimit -n)")
        }

        struct RunStatistics {
            var p50: Double, p99: Double, max: Double, delivered: Int, expected: Int, writesPerSecond: Double
        }
        func statistics(_ latencies: [Int32], expected: Int, elapsed: Double) -> RunStatistics {
            let sorted = latencies.sorted()
            func percentile(_ p: Double) -> Double {
                guard !sorted.isEmpty else { return .infinity }
                return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
            }
            return RunStatistics(
                p50: percentile(0.5), p99: percentile(0.99), max: Double(sorted.last ?? 0) / 1000,
                delivered: sorted.count, expected: expected, writesPerSecond: Double(writesPerRun) / elapsed)
        }
        func report(_ label: String, _ run: String, _ s: RunStatistics) {
            print("   \(label.padding(toLength: 30)) \(run.padding(toLength: 8)) p50 \(rounded(s.p50, places: 2)) ms  p99 \(rounded(s.p99, places: 2)) ms  max \(rounded(s.max, places: 1)) ms  delivered \(s.delivered)/\(s.expected)  \(rounded(s.writesPerSecond, places: 1)) writes/s")
        }
        /// Warm-up and measured runs: `writesPerRun` writes at even intervals each, then every delivery.
        func measure(_ label: String, client: FanoutClient, nextSequence: inout Int, write: (Int) throws -> Void) throws -> [RunStatistics] {
            var results: [RunStatistics] = []
            for run in 0...context.configuration.measuredRunCount {
                let start = ContinuousClock.now
                for index in 0..<writesPerRun {
                    let sequence = nextSequence
                    nextSequence += 1
                    client.markSent(sequence)
                    try write(sequence)
                    let next = start + .microseconds(intervalMicroseconds * (index + 1))
                    let now = ContinuousClock.now
                    if next > now { Thread.sleep(forTimeInterval: (next - now).seconds) }
                }
                let elapsed = (ContinuousClock.now - start).seconds
                let (latencies, closed) = client.collect(expecting: writesPerRun * streamCount, seconds: 10)
                let result = statistics(latencies, expected: writesPerRun * streamCount, elapsed: elapsed)
                report(label, run == 0 ? "warm-up" : "run \(run)/\(context.configuration.measuredRunCount)", result)
                if closed > 0 { print("   \(closed) streams were closed (cut off as slow readers?)") }
                if run > 0 || result.delivered < result.expected { results.append(result) }
                if result.delivered < result.expected {
                    // The server is behind by more than 10 s: more load would only grow its backlog.
                    print("   stopping: \(result.expected - result.delivered) deliveries still missing 10 s after the last write")
                    break
                }
            }
            return results
        }
        func median(_ results: [RunStatistics]) -> RunStatistics { results.sorted { $0.p99 < $1.p99 }[results.count / 2] }

        // Hearth: the real binary, streams on /fan/v, PUTs on one keep-alive connection.
        let hearth = try ServerHarness.startHearth(name: "sse-fanout")
        defer {
            ServerHarness.stop(hearth.process)
            try? FileManager.default.removeItem(atPath: hearth.directory)
        }
        try ServerHarness.request(port: hearth.port, "PUT", "/fan/v.json?ns=bench", body: "0")
        let client = FanoutClient()
        let clock = ContinuousClock()
        let opening = clock.now
        try client.open(count: streamCount, port: hearth.port, request: "GET /fan/v.json?ns=bench HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        client.start()
        try client.waitForInitialEvents(streamCount, seconds: 120)
        print("   \(streamCount) streams open and past their first event in \(rounded((clock.now - opening).seconds, places: 2)) s; \(writesPerRun) writes per run, \(writesPerSecond) a second")
        // Open loop: a write every 1/writesPerSecond s whether or not earlier ones were answered.
        let writer = OpenLoopWriter(port: hearth.port)
        var sequence = 1
        let hearthRuns = try measure("Hearth (durable PUT → SSE)", client: client, nextSequence: &sequence) { value in
            try writer.put("/fan/v.json?ns=bench&print=silent", body: String(value))
        }
        try writer.finish()
        client.stop()
        ServerHarness.stop(hearth.process)

        // Reference: the same client, the same bytes, a bare write loop over the same number of sockets.
        let raw = try RawFanout()
        defer { raw.close() }
        let accepting = raw.accept(count: streamCount)
        let referenceClient = FanoutClient()
        try referenceClient.open(count: streamCount, port: raw.port, request: "GET / HTTP/1.1\r\n\r\n")
        while raw.acceptedCount < streamCount { usleep(10_000) }
        withExtendedLifetime(accepting) {}
        referenceClient.start()
        raw.broadcast(0)
        try referenceClient.waitForInitialEvents(streamCount, seconds: 60)
        var referenceSequence = 1
        let referenceRuns = try measure("bare write loop (reference)", client: referenceClient, nextSequence: &referenceSequence) { value in
            raw.broadcast(value)
        }
        referenceClient.stop()

        let result = median(hearthRuns), reference = median(referenceRuns)
        report("Hearth (durable PUT → SSE)", "median", result)
        report("bare write loop (reference)", "median", reference)
        return BenchmarkResult(
            scenario: scenario, metric: "p99 write-to-delivery latency, \(streamCount) streams, \(writesPerSecond) writes/s",
            value: result.p99, unit: "ms", reference: "bare write loop to the same sockets, same client",
            referenceValue: reference.p99,
            extras: [("p50ms", result.p50), ("maxMs", result.max), ("referenceP50ms", reference.p50),
                     ("delivered", Double(result.delivered)), ("expected", Double(result.expected))])
    }
}
