import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A server the ws.* scenarios load: the real `hearth serve --emulator` binary or `redis-server`, each in
/// its own process (so that its RSS is its own), with the names its protocol uses.
struct LoadTarget {
    let label: String
    let wire: LoadProtocol
    let port: Int
    let pid: Int32
    /// Realtime connections authenticate (`auth` with the emulator's `owner`); Redis has no step for it.
    let credential: String?
    /// The one location (channel) of the fan-out scenarios, and the prefix of ws.writes' paths (keys).
    let fanPath: String
    let writePath: String
    let stop: () -> Void
    /// Where listeners connect, worker by worker in turn (a cluster's nodes); empty: `port`, where the
    /// writer connects.
    var listenerPorts: [Int] = []

    static func hearth(name: String, binary: String? = nil, label: String = "Hearth") throws(ServerHarness.Failure) -> LoadTarget {
        let server = try ServerHarness.startHearth(name: name, binary: binary)
        return LoadTarget(
            label: label, wire: .realtime, port: server.port, pid: server.process.processIdentifier, credential: "owner",
            fanPath: "/fan", writePath: "/w",
            stop: {
                ServerHarness.stop(server.process)
                try? FileManager.default.removeItem(atPath: server.directory)
            })
    }

    static func redis(name: String, durable: Bool = false) throws(ServerHarness.Failure) -> LoadTarget {
        let peer = try RedisPeer(name: name, durable: durable)
        return LoadTarget(
            label: durable ? "Redis (appendfsync always)" : "Redis", wire: .redis, port: peer.port,
            pid: peer.process.processIdentifier, credential: nil, fanPath: "fan", writePath: "w", stop: { peer.stop() })
    }

    var residentBytes: Int { ProcessMemory.residentBytes(pid: pid) ?? 0 }
}

/// Settings shared by the ws.* scenarios, each overridable from the environment.
enum RealtimeLoad {
    /// The fan-out scenarios' shape (ws.fanout, ws.fanout.rules), from the environment.
    struct FanoutSettings {
        let listenerCount = RealtimeLoad.setting("HEARTH_BENCH_WS_LISTENERS", 9_000)
        let seconds = RealtimeLoad.settingDouble("HEARTH_BENCH_WS_SECONDS", 3)
        /// Writes in flight.
        let window = RealtimeLoad.setting("HEARTH_BENCH_WS_WINDOW", 8)
    }

    /// One round of ws.writes' load: `fleet`'s writers write for `seconds`, `window` writes in flight
    /// each, then stop and settle for half a second. Returns the acknowledged writes per second and the
    /// round's counts.
    static func writeRound(_ fleet: LoadFleet, window: Int, seconds: Double) throws(ServerHarness.Failure) -> (rate: Double, stats: LoadFleet.Stats) {
        _ = try fleet.stats()
        let start = monotonicNanoseconds()
        fleet.send("write \(window)")
        usleep(UInt32(seconds * 1e6))
        let stats = try fleet.stats()
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        fleet.send("write 0")
        usleep(500_000)
        return (Double(stats.acknowledged) / elapsed, stats)
    }

    static func setting(_ name: String, _ fallback: Int) -> Int {
        Int(ProcessInfo.processInfo.environment[name] ?? "") ?? fallback
    }

    static func settingDouble(_ name: String, _ fallback: Double) -> Double {
        Double(ProcessInfo.processInfo.environment[name] ?? "") ?? fallback
    }

    /// Worker processes of the load generator (HEARTH_BENCH_WS_WORKERS, default 2: the machine has two cores).
    static var workerCount: Int { max(1, setting("HEARTH_BENCH_WS_WORKERS", 2)) }

    /// `count` listeners of `target`'s fan-out location over the worker processes, all ready.
    static func listeners(_ target: LoadTarget, count: Int, role: String = "listener") throws(ServerHarness.Failure) -> LoadFleet {
        LoadWorker.raiseOpenFileLimit()
        let ports = target.listenerPorts.isEmpty ? [target.port] : target.listenerPorts
        let fleet = try LoadFleet(workerCount: max(workerCount, ports.count), connections: count) { options, worker in
            options.wire = target.wire
            options.port = ports[worker % ports.count]
            options.role = role
            options.path = role == "writer" ? target.writePath : target.fanPath
            options.credential = target.credential
        }
        let ready = try fleet.waitReady(seconds: 300)
        print("   \(target.label): \(ready.ready) of \(count) connections \(role == "writer" ? "listening to their own paths" : "listening") in \(rounded(Double(ready.milliseconds) / 1000, places: 2)) s over \(fleet.workerCount) worker processes\(ready.error.map { "; first failure: \($0)" } ?? "")")
        guard ready.ready == count else {
            throw ServerHarness.Failure("\(target.label): only \(ready.ready) of \(count) connections got ready (\(ready.error ?? "no error"))")
        }
        return fleet
    }

    /// One connection of this process that only writes to the fan-out location, ready.
    static func publisher(_ target: LoadTarget) throws(ServerHarness.Failure) -> (loop: LoadLoop, connection: LoadConnection) {
        let loop: LoadLoop
        let connection: LoadConnection
        do {
            loop = try LoadLoop(wire: target.wire, port: target.port, credential: target.credential)
            connection = try loop.open(role: .publisher, path: target.fanPath, source: nil)
        } catch { throw ServerHarness.Failure("\(error)") }
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while connection.phase != .ready, monotonicNanoseconds() < deadline {
            loop.poll(timeout: 10)
            if let error = loop.lastError { throw ServerHarness.Failure("writer: \(error)") }
        }
        guard connection.phase == .ready else { throw ServerHarness.Failure("writer not ready within 10 s") }
        return (loop, connection)
    }

    /// Runs `loop` for `seconds`.
    static func pump(_ loop: LoadLoop, seconds: Double) {
        let end = monotonicNanoseconds() + Int64(seconds * 1e9)
        while monotonicNanoseconds() < end { loop.poll(timeout: 5) }
    }

    /// Runs `loop` until `connection` has no write in flight (at most `seconds`).
    static func drain(_ loop: LoadLoop, _ connection: LoadConnection, seconds: Double = 30) {
        let end = monotonicNanoseconds() + Int64(seconds * 1e9)
        while connection.inFlight > 0, monotonicNanoseconds() < end { loop.poll(timeout: 5) }
    }

    /// Throughput runs (a warm-up, then `runs`): one writer keeps `window` writes in flight for `seconds`;
    /// deliveries counted by the workers in that time. Returns each measured run's deliveries/s and how
    /// many connections were closed at the end.
    static func throughputRuns(
        _ target: LoadTarget, fleet: LoadFleet, window: Int, seconds: Double, runs: Int
    ) throws -> (rates: [Double], closed: Int) {
        let (loop, writer) = try publisher(target)
        var rates: [Double] = []
        var closed = 0
        for run in 0...runs {
            _ = try fleet.stats()
            _ = loop.takeCounters()
            let start = monotonicNanoseconds()
            loop.startWriting(window: window)
            pump(loop, seconds: seconds)
            let stats = try fleet.stats()
            let elapsed = Double(monotonicNanoseconds() - start) / 1e9
            loop.startWriting(window: 0)
            drain(loop, writer)
            let acks = loop.takeCounters()
            let rate = Double(stats.delivered) / elapsed
            let label = run == 0 ? "warm-up" : "run \(run)/\(runs)"
            print("   \(target.label.padding(toLength: 10)) \(label.padding(toLength: 9)) \(Int(rate)) deliveries/s  \(Int(Double(acks.acknowledged) / elapsed)) acked writes/s  ack p50 \(milliseconds(acks.acknowledgementLatency.percentileMilliseconds(0.5)))  \(rounded(Double(stats.delivered) / Double(max(1, stats.reads)), places: 2)) messages per client read  ready \(stats.ready)  closed \(stats.closed)")
            usleep(300_000)
            if run > 0 { rates.append(rate) }
            closed = stats.closed
        }
        _ = try fleet.stats()
        return (rates, closed)
    }

    /// Write-to-delivery latency of an open loop: `writesPerSecond` writes to the fan-out location for
    /// `seconds` (at least 5), each sent on time whether or not earlier ones were answered; every
    /// delivery timed from its write's send by the workers.
    struct Latency {
        var p50: Double?, p99: Double?, max: Double?, ackP50: Double?, ackP99: Double?
        var writes = 0, delivered = 0, expected = 0
    }

    static func openLoopLatency(
        _ target: LoadTarget, fleet: LoadFleet, listenerCount: Int, writesPerSecond: Double, seconds: Double
    ) throws -> Latency {
        let (loop, writer) = try publisher(target)
        _ = try fleet.stats()
        let interval = 1e9 / max(writesPerSecond, 0.1)
        let writes = max(5, Int(seconds * writesPerSecond))
        let start = monotonicNanoseconds()
        for index in 0..<writes {
            let due = start + Int64(Double(index) * interval)
            while monotonicNanoseconds() < due { loop.poll(timeout: 1) }
            loop.write(writer)
        }
        drain(loop, writer)
        usleep(500_000)
        let stats = try fleet.stats()
        let acks = loop.takeCounters()
        var result = Latency()
        result.p50 = stats.deliveryLatency.percentileMilliseconds(0.5)
        result.p99 = stats.deliveryLatency.percentileMilliseconds(0.99)
        result.max = stats.deliveryLatency.percentileMilliseconds(1)
        result.ackP50 = acks.acknowledgementLatency.percentileMilliseconds(0.5)
        result.ackP99 = acks.acknowledgementLatency.percentileMilliseconds(0.99)
        result.writes = writes
        result.delivered = stats.delivered
        result.expected = writes * listenerCount
        print("   \(target.label.padding(toLength: 10)) latency   \(writes) writes at \(rounded(writesPerSecond, places: 1))/s: delivery p50 \(milliseconds(result.p50))  p99 \(milliseconds(result.p99))  max \(milliseconds(result.max))  ack p50 \(milliseconds(result.ackP50))  p99 \(milliseconds(result.ackP99))  delivered \(stats.delivered)/\(result.expected)")
        return result
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count.isMultiple(of: 2) ? (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2 : sorted[sorted.count / 2]
    }

    static func milliseconds(_ value: Double?) -> String { value.map { "\(rounded($0, places: 2)) ms" } ?? "–" }
}

extension Scenario {
    /// 1 writer, 9,000 listeners on one location, 100-byte values: deliveries/s with writes acknowledged
    /// durably (a window of writes in flight), then write-to-delivery latency at half that rate; Redis
    /// PUBLISH to as many SUBSCRIBE connections as the reference, with the same client.
    static let wsFanout = Scenario(
        name: "ws.fanout",
        summary: "1 writer → 9,000 listeners on one path, 100-byte values: deliveries/s, then latency at half rate; Redis pub/sub alongside"
    ) { context in
        let settings = RealtimeLoad.FanoutSettings()
        let (listenerCount, seconds, window) = (settings.listenerCount, settings.seconds, settings.window)
        let runs = context.configuration.measuredRunCount
        print("   \(listenerCount) listeners, \(Int(seconds)) s per run, \(window) writes in flight, \(RealtimeLoad.workerCount) client processes")

        struct Side {
            var rates: [Double] = []
            var closed = 0
            var p50: Double?, p99: Double?, max: Double?, ackP50: Double?, ackP99: Double?
            var latencyDelivered = 0, latencyExpected = 0
            /// One write per second: how long fanning a single write out to every listener takes.
            var singleP50: Double?, singleP99: Double?
        }

        func throughput(_ target: LoadTarget, fleet: LoadFleet, side: inout Side) throws {
            (side.rates, side.closed) = try RealtimeLoad.throughputRuns(
                target, fleet: fleet, window: window, seconds: seconds, runs: runs)
        }

        /// Open-loop writes at `writesPerSecond` for `seconds`; every delivery timed from its write's send.
        func latency(_ target: LoadTarget, fleet: LoadFleet, writesPerSecond: Double, side: inout Side) throws {
            var single = Side()
            try openLoop(target, fleet: fleet, writesPerSecond: 1, side: &single)
            (side.singleP50, side.singleP99) = (single.p50, single.p99)
            try openLoop(target, fleet: fleet, writesPerSecond: writesPerSecond, side: &side)
        }

        func openLoop(_ target: LoadTarget, fleet: LoadFleet, writesPerSecond: Double, side: inout Side) throws {
            let measured = try RealtimeLoad.openLoopLatency(
                target, fleet: fleet, listenerCount: listenerCount, writesPerSecond: writesPerSecond, seconds: seconds)
            (side.p50, side.p99, side.max, side.ackP50, side.ackP99) = (measured.p50, measured.p99, measured.max, measured.ackP50, measured.ackP99)
            (side.latencyDelivered, side.latencyExpected) = (measured.delivered, measured.expected)
        }

        var hearth = Side(), redis = Side()
        do {
            let target = try LoadTarget.hearth(name: "ws-fanout")
            defer { target.stop() }
            let fleet = try RealtimeLoad.listeners(target, count: listenerCount)
            defer { fleet.stop() }
            try throughput(target, fleet: fleet, side: &hearth)
            let halfRate = RealtimeLoad.median(hearth.rates) / 2 / Double(listenerCount)
            try latency(target, fleet: fleet, writesPerSecond: halfRate, side: &hearth)
        }
        do {
            let target = try LoadTarget.redis(name: "ws-fanout-redis")
            defer { target.stop() }
            let fleet = try RealtimeLoad.listeners(target, count: listenerCount)
            defer { fleet.stop() }
            try throughput(target, fleet: fleet, side: &redis)
            // Same offered load as Hearth's latency run, so the two latencies compare like for like.
            let halfRate = RealtimeLoad.median(hearth.rates) / 2 / Double(listenerCount)
            try latency(target, fleet: fleet, writesPerSecond: halfRate, side: &redis)
        }
        let value = RealtimeLoad.median(hearth.rates), reference = RealtimeLoad.median(redis.rates)
        print("   deliveries/s per run: Hearth \(hearth.rates.map { String(Int($0)) }.joined(separator: ", ")); Redis \(redis.rates.map { String(Int($0)) }.joined(separator: ", "))")
        return BenchmarkResult(
            scenario: "ws.fanout", metric: "deliveries per second, 1 writer → \(listenerCount) listeners, durable writes",
            value: value, unit: "messages/s", reference: "redis-server PUBLISH to \(listenerCount) SUBSCRIBE connections, same client",
            referenceValue: reference,
            extras: [
                ("p50ms", hearth.p50 ?? .nan), ("p99ms", hearth.p99 ?? .nan), ("maxMs", hearth.max ?? .nan),
                ("ackP50ms", hearth.ackP50 ?? .nan), ("ackP99ms", hearth.ackP99 ?? .nan),
                ("redisP50ms", redis.p50 ?? .nan), ("redisP99ms", redis.p99 ?? .nan),
                ("oneWritePerSecondP50ms", hearth.singleP50 ?? .nan), ("oneWritePerSecondP99ms", hearth.singleP99 ?? .nan),
                ("redisOneWritePerSecondP50ms", redis.singleP50 ?? .nan), ("redisOneWritePerSecondP99ms", redis.singleP99 ?? .nan),
                ("closed", Double(hearth.closed)), ("latencyDelivered", Double(hearth.latencyDelivered)),
                ("latencyExpected", Double(hearth.latencyExpected)),
            ])
    }

    /// 1,000 listeners on one location, open-loop writes at 50 and at 500 a second: write-to-delivery
    /// latency, side by side with Redis pub/sub at the same offered load (targets: p99 ≤ 5 ms at 50/s, and
    /// p50/p99 no worse than Redis's at both rates).
    static let wsLatency = Scenario(
        name: "ws.latency",
        summary: "1 writer → 1,000 listeners at 50 and 500 writes/s: write-to-delivery p50/p99; Redis pub/sub at the same load alongside"
    ) { _ in
        let listenerCount = RealtimeLoad.setting("HEARTH_BENCH_WS_LATENCY_LISTENERS", 1_000)
        let seconds = RealtimeLoad.settingDouble("HEARTH_BENCH_WS_SECONDS", 3)
        let rates: [Double] = [50, 500]
        print("   \(listenerCount) listeners, \(Int(seconds)) s per rate, \(RealtimeLoad.workerCount) client processes")
        func measure(_ target: LoadTarget) throws -> [RealtimeLoad.Latency] {
            defer { target.stop() }
            let fleet = try RealtimeLoad.listeners(target, count: listenerCount)
            defer { fleet.stop() }
            // A short warm-up at the lower rate (connections, caches), not counted.
            _ = try RealtimeLoad.openLoopLatency(target, fleet: fleet, listenerCount: listenerCount, writesPerSecond: rates[0], seconds: 1)
            return try rates.map { try RealtimeLoad.openLoopLatency(target, fleet: fleet, listenerCount: listenerCount, writesPerSecond: $0, seconds: seconds) }
        }
        let hearth = try measure(try LoadTarget.hearth(name: "ws-latency"))
        let redis = try measure(try LoadTarget.redis(name: "ws-latency-redis"))
        for (index, rate) in rates.enumerated() {
            print("   at \(Int(rate))/s: Hearth p50 \(RealtimeLoad.milliseconds(hearth[index].p50)) p99 \(RealtimeLoad.milliseconds(hearth[index].p99)); Redis p50 \(RealtimeLoad.milliseconds(redis[index].p50)) p99 \(RealtimeLoad.milliseconds(redis[index].p99))")
        }
        return BenchmarkResult(
            scenario: "ws.latency", metric: "p99 write-to-delivery at 50 writes/s, 1 writer → \(listenerCount) listeners",
            value: hearth[0].p99 ?? .nan, unit: "ms", reference: "redis-server PUBLISH to \(listenerCount) SUBSCRIBE connections, same offered load",
            referenceValue: redis[0].p99 ?? .nan,
            extras: [
                ("p50ms", hearth[0].p50 ?? .nan), ("redisP50ms", redis[0].p50 ?? .nan),
                ("p50ms500", hearth[1].p50 ?? .nan), ("p99ms500", hearth[1].p99 ?? .nan),
                ("redisP50ms500", redis[1].p50 ?? .nan), ("redisP99ms500", redis[1].p99 ?? .nan),
                ("delivered500", Double(hearth[1].delivered)), ("expected500", Double(hearth[1].expected)),
            ])
    }

    /// 9,000 idle connections, each authenticated with one listen: the server's RSS (and per connection);
    /// Redis with as many SUBSCRIBE connections as the reference.
    static let wsIdle = Scenario(
        name: "ws.idle",
        summary: "9,000 authenticated connections with one listen each: server RSS; Redis with 9,000 subscribers alongside"
    ) { _ in
        let count = RealtimeLoad.setting("HEARTH_BENCH_WS_LISTENERS", 9_000)
        func measure(_ target: LoadTarget) throws -> (total: Int, perConnection: Double) {
            defer { target.stop() }
            usleep(300_000)
            let before = target.residentBytes
            let fleet = try RealtimeLoad.listeners(target, count: count)
            defer { fleet.stop() }
            usleep(1_000_000)
            let after = target.residentBytes
            let perConnection = Double(after - before) / Double(count)
            print("   \(target.label.padding(toLength: 10)) RSS \(rounded(Double(before) / 1e6, places: 1)) MB → \(rounded(Double(after) / 1e6, places: 1)) MB with \(count) connections: \(Int(perConnection)) bytes per connection")
            return (after, perConnection)
        }
        let hearth = try measure(try LoadTarget.hearth(name: "ws-idle"))
        let redis = try measure(try LoadTarget.redis(name: "ws-idle-redis"))
        return BenchmarkResult(
            scenario: "ws.idle", metric: "server RSS with \(count) idle authenticated connections, one listen each",
            value: Double(hearth.total) / 1e6, unit: "MB", reference: "redis-server RSS with \(count) SUBSCRIBE connections",
            referenceValue: Double(redis.total) / 1e6,
            extras: [("bytesPerConnection", hearth.perConnection), ("redisBytesPerConnection", redis.perConnection)])
    }

    /// 64 clients each listening to its own path and writing to it with a window of writes in flight:
    /// acknowledged durable writes/s. Reference: Redis with `appendfsync always` (it too answers a write
    /// only after fsync), 64 clients `SET`ting their own keys with the same window.
    static let wsWrites = Scenario(
        name: "ws.writes",
        summary: "64 clients writing to their own listened paths: acknowledged durable writes/s; Redis SET with appendfsync always alongside"
    ) { context in
        let clients = RealtimeLoad.setting("HEARTH_BENCH_WS_WRITERS", 64)
        let window = RealtimeLoad.setting("HEARTH_BENCH_WS_WRITE_WINDOW", 8)
        let seconds = RealtimeLoad.settingDouble("HEARTH_BENCH_WS_SECONDS", 3)
        let runs = context.configuration.measuredRunCount
        print("   \(clients) clients, \(window) writes in flight each, \(Int(seconds)) s per run")
        func measure(_ target: LoadTarget) throws -> (rates: [Double], p50: Double?, p99: Double?, delivered: Int) {
            defer { target.stop() }
            let fleet = try RealtimeLoad.listeners(target, count: clients, role: "writer")
            defer { fleet.stop() }
            var rates: [Double] = []
            var p50: Double?, p99: Double?, delivered = 0
            for run in 0...runs {
                let (rate, stats) = try RealtimeLoad.writeRound(fleet, window: window, seconds: seconds)
                let label = run == 0 ? "warm-up" : "run \(run)/\(runs)"
                let runP50 = stats.acknowledgementLatency.percentileMilliseconds(0.5), runP99 = stats.acknowledgementLatency.percentileMilliseconds(0.99)
                print("   \(target.label.padding(toLength: 28)) \(label.padding(toLength: 9)) \(Int(rate)) acked writes/s  ack p50 \(RealtimeLoad.milliseconds(runP50))  p99 \(RealtimeLoad.milliseconds(runP99))  own-listen deliveries \(stats.delivered)  closed \(stats.closed)")
                if run > 0 {
                    rates.append(rate)
                    if p50 == nil { (p50, p99, delivered) = (runP50, runP99, stats.delivered) }
                }
            }
            return (rates, p50, p99, delivered)
        }
        let hearth = try measure(try LoadTarget.hearth(name: "ws-writes"))
        let redis = try measure(try LoadTarget.redis(name: "ws-writes-redis", durable: true))
        return BenchmarkResult(
            scenario: "ws.writes", metric: "acknowledged durable writes per second, \(clients) clients, own listened paths",
            value: RealtimeLoad.median(hearth.rates), unit: "writes/s",
            reference: "redis-server appendfsync always, \(clients) clients SET, same window",
            referenceValue: RealtimeLoad.median(redis.rates),
            extras: [("ackP50ms", hearth.p50 ?? .nan), ("ackP99ms", hearth.p99 ?? .nan),
                     ("redisAckP50ms", redis.p50 ?? .nan), ("redisAckP99ms", redis.p99 ?? .nan)])
    }

    /// 5,000 listeners drop their connections at once and reconnect spread over 1 s, while a writer writes
    /// every 10 ms:
    /// the time until all have listened again, and whether every one then holds the last value.
    static let wsReconnect = Scenario(
        name: "ws.reconnect",
        summary: "5,000 listeners drop and reconnect within 1 s under writes every 10 ms: time until all re-listened, no event lost; Redis alongside"
    ) { context in
        let count = RealtimeLoad.setting("HEARTH_BENCH_WS_RECONNECTS", 5_000)
        // "Reconnect within 1 s": all drop at once and come back evenly over this many ms (0: all at once,
        // which only measures the listen backlog: SYNs beyond it are retried after 1 s, 3 s, …).
        let spreadMilliseconds = RealtimeLoad.setting("HEARTH_BENCH_WS_RECONNECT_SPREAD_MS", 1_000)
        print("   \(count) listeners drop at once and reconnect evenly over \(spreadMilliseconds) ms; a write every 10 ms meanwhile")
        let runs = context.configuration.measuredRunCount
        func measure(_ target: LoadTarget) throws -> (times: [Double], stale: Int) {
            defer { target.stop() }
            let fleet = try RealtimeLoad.listeners(target, count: count)
            defer { fleet.stop() }
            let (loop, writer) = try RealtimeLoad.publisher(target)
            var times: [Double] = []
            var staleRuns = 0
            for run in 0...runs {
                let start = monotonicNanoseconds()
                fleet.send("reconnect \(spreadMilliseconds)")
                var waiting = Set(0..<fleet.workerCount)
                var nextWrite = start
                var reportedMs = 0
                var firstError: String?
                while !waiting.isEmpty {
                    if monotonicNanoseconds() >= nextWrite {
                        loop.write(writer)
                        nextWrite += 10_000_000
                    }
                    loop.poll(timeout: 2)
                    for index in waiting where fleet.hasLine(from: index) {
                        let ready = try fleet.waitReady(seconds: 60, only: [index])
                        reportedMs = max(reportedMs, ready.milliseconds)
                        if ready.closed > 0 { firstError = firstError ?? ready.error ?? "\(ready.closed) failed" }
                        waiting.remove(index)
                    }
                    if monotonicNanoseconds() - start > 120_000_000_000 { throw ServerHarness.Failure("reconnect took over 120 s") }
                }
                let elapsed = Double(monotonicNanoseconds() - start) / 1e6
                // One more write after everyone is back: every listener must end on it.
                loop.write(writer)
                let last = monotonicNanoseconds()
                RealtimeLoad.drain(loop, writer)
                usleep(500_000)
                let stats = try fleet.stats()
                let complete = stats.ready == count && stats.minLastStamp >= last - 1_000_000_000 && stats.minLastStamp > start
                let label = run == 0 ? "warm-up" : "run \(run)/\(runs)"
                print("   \(target.label.padding(toLength: 10)) \(label.padding(toLength: 9)) all \(stats.ready) re-listened in \(Int(elapsed)) ms (slowest worker \(reportedMs) ms); every listener holds the last write: \(complete ? "yes" : "NO")\(firstError.map { "; failures: \($0)" } ?? "")")
                if run > 0 {
                    times.append(elapsed)
                    if !complete { staleRuns += 1 }
                }
            }
            return (times, staleRuns)
        }
        let hearth = try measure(try LoadTarget.hearth(name: "ws-reconnect"))
        let redis = try measure(try LoadTarget.redis(name: "ws-reconnect-redis"))
        return BenchmarkResult(
            scenario: "ws.reconnect", metric: "time until \(count) dropped listeners have all listened again",
            value: RealtimeLoad.median(hearth.times), unit: "ms", reference: "redis-server, \(count) SUBSCRIBE connections reconnecting",
            referenceValue: RealtimeLoad.median(redis.times),
            extras: [("runsWithALostEvent", Double(hearth.stale)), ("maxMs", hearth.times.max() ?? .nan)])
    }
}
