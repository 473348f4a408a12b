import Foundation
import HearthFunctions
import HearthSupport

extension Scenario {
    /// Events per second through one functions process (HearthFunctions, in this process) whose handler
    /// does nothing but count, while 64 realtime clients write to their own paths as fast as they are
    /// acknowledged; alongside, one bare realtime listener on the parent of those paths receives the same
    /// writes. Each rate is what its consumer received divided by the time from the first write to the
    /// last thing it received (so a consumer that falls behind is charged for catching up). Here the writers
    /// are the limit, so an extra, `backlogEventsPerSecond`, measures the process alone: stopped while
    /// the writers write, started again from its cursor, the events it then works through per second.
    static let functionsThroughput = Scenario(
        name: "functions.throughput",
        summary: "events/s through one functions process with no-op handlers, against a bare realtime listener of the same writes"
    ) { context in
        let clients = RealtimeLoad.setting("HEARTH_BENCH_WS_WRITERS", 64)
        let window = RealtimeLoad.setting("HEARTH_BENCH_WS_WRITE_WINDOW", 8)
        let seconds = RealtimeLoad.settingDouble("HEARTH_BENCH_WS_SECONDS", 3)
        let runs = context.configuration.measuredRunCount
        let target = try LoadTarget.hearth(name: "functions-throughput")
        defer { target.stop() }

        let handled = Locked(0)
        let functions = Functions()
        functions.onValueWritten("/w/{client}", name: "count") { _ in handled.withLock { $0 += 1 } }
        var options = FunctionsOptions()
        options.databaseURL = "http://127.0.0.1:\(target.port)?ns=bench"
        options.adminToken = "owner"
        options.name = "bench"
        func startFunctions() throws -> FunctionsProcess {
            let process: FunctionsProcess
            switch functions.start(options) {
            case .success(let started): process = started
            case .failure(let problem): throw ServerHarness.Failure("the functions did not start: \(problem)")
            }
            let registered = monotonicNanoseconds() + 30_000_000_000
            while !process.isFollowing && monotonicNanoseconds() < registered { usleep(10_000) }
            guard process.isFollowing else { throw ServerHarness.Failure("the functions process did not register within 30 s") }
            return process
        }
        var process = try startFunctions()

        let listener = try LoadFleet(workerCount: 1, connections: 1) { options, _ in
            options.wire = target.wire
            options.port = target.port
            options.role = "listener"
            options.path = target.writePath
            options.credential = target.credential
        }
        defer { listener.stop() }
        _ = try listener.waitReady(seconds: 30)
        let writers = try RealtimeLoad.listeners(target, count: clients, role: "writer")
        defer { writers.stop() }
        print("   \(clients) writers, \(window) writes in flight each, \(Int(seconds)) s of writes per run")

        var functionRates: [Double] = [], listenerRates: [Double] = []
        for run in 0...runs {
            _ = try writers.stats()
            _ = try listener.stats()
            let before = handled.withLock { $0 }
            let start = monotonicNanoseconds()
            writers.send("write \(window)")
            usleep(UInt32(seconds * 1e6))
            writers.send("write 0")
            // Until neither consumer has received anything for 500 ms: each one's last arrival.
            var lastHandled = before, lastHandledAt = start
            var delivered = 0, lastDeliveredAt = start
            var quietSince = monotonicNanoseconds()
            while monotonicNanoseconds() - quietSince < 500_000_000 {
                usleep(10_000)
                let now = monotonicNanoseconds()
                let count = handled.withLock { $0 }
                let more = try listener.stats().delivered
                if count != lastHandled { (lastHandled, lastHandledAt, quietSince) = (count, now, now) }
                if more > 0 { (delivered, lastDeliveredAt, quietSince) = (delivered + more, now, now) }
            }
            let acknowledged = try writers.stats().acknowledged
            let events = lastHandled - before
            let functionRate = Double(events) / (Double(lastHandledAt - start) / 1e9)
            let listenerRate = Double(delivered) / (Double(lastDeliveredAt - start) / 1e9)
            let label = run == 0 ? "warm-up" : "run \(run)/\(runs)"
            print("   \(label.padding(toLength: 9)) \(acknowledged) writes acknowledged; functions \(events) events, \(Int(functionRate))/s; listener \(delivered) pushes, \(Int(listenerRate))/s")
            if run > 0 {
                functionRates.append(functionRate)
                listenerRates.append(listenerRate)
            }
        }
        // The backlog: the process stopped (its cursor saved) while the writers write, then started again.
        process.stop()
        _ = try writers.stats()
        writers.send("write \(window)")
        usleep(UInt32(seconds * 1e6))
        writers.send("write 0")
        usleep(500_000)
        let backlog = try writers.stats().acknowledged
        let before = handled.withLock { $0 }
        let start = monotonicNanoseconds()
        process = try startFunctions()
        defer { process.stop() }
        let deadline = start + 120_000_000_000
        while handled.withLock({ $0 }) - before < backlog && monotonicNanoseconds() < deadline { usleep(2_000) }
        let drained = handled.withLock { $0 } - before
        let backlogRate = Double(drained) / (Double(monotonicNanoseconds() - start) / 1e9)
        print("   backlog   \(backlog) writes made while stopped; \(drained) events worked through from the cursor at \(Int(backlogRate))/s (registration included)")
        return BenchmarkResult(
            scenario: "functions.throughput", metric: "events per second through one functions process (no-op handlers), \(clients) realtime writers",
            value: RealtimeLoad.median(functionRates), unit: "events/s",
            reference: "a bare realtime listener on the writes' parent, the same writes",
            referenceValue: RealtimeLoad.median(listenerRates),
            extras: [("backlogEventsPerSecond", backlogRate)])
    }
}
