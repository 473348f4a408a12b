import Foundation

/// Scenarios that measure this build against another (`hearth-bench --baseline PATH`) in one invocation,
/// round by round in turn, so that a change's cost is read from pairs that ran a few seconds apart rather
/// than from invocations minutes apart, between which this machine drifts by 10 % and more
/// (docs/BENCHMARKS.md). The baseline is any `hearth` binary: the build before a change, or this build
/// with the change taken out.
extension Scenario {
    /// ws.writes' load (64 realtime clients, each writing to its own listened path) on both builds, both
    /// servers up with their clients connected, writing to one at a time: this build first in odd rounds,
    /// the baseline first in even ones. The result is this build's median rate, the baseline's as the
    /// reference, and the median of the rounds' ratios.
    static let abWsWrites = Scenario(
        name: "ab.ws.writes",
        summary: "ws.writes on this build and on --baseline's, alternating rounds in one invocation: acknowledged durable writes/s and their ratio"
    ) { context in
        guard let baseline = context.configuration.baselineBinary else { throw ServerHarness.Failure("ab.ws.writes needs --baseline") }
        let clients = RealtimeLoad.setting("HEARTH_BENCH_WS_WRITERS", 64)
        let window = RealtimeLoad.setting("HEARTH_BENCH_WS_WRITE_WINDOW", 8)
        let seconds = RealtimeLoad.settingDouble("HEARTH_BENCH_WS_SECONDS", 3)
        let runs = context.configuration.measuredRunCount
        print("   \(clients) clients, \(window) writes in flight each, \(Int(seconds)) s per run; baseline \(baseline)")
        let targets = [
            try LoadTarget.hearth(name: "ab-ws-writes-this", label: "this build"),
            try LoadTarget.hearth(name: "ab-ws-writes-baseline", binary: baseline, label: "baseline"),
        ]
        defer { for target in targets { target.stop() } }
        var fleets: [LoadFleet] = []
        defer { for fleet in fleets { fleet.stop() } }
        for target in targets { fleets.append(try RealtimeLoad.listeners(target, count: clients, role: "writer")) }
        func rate(_ index: Int, _ label: String) throws(ServerHarness.Failure) -> Double {
            let (rate, stats) = try RealtimeLoad.writeRound(fleets[index], window: window, seconds: seconds)
            print("   \(targets[index].label.padding(toLength: 12)) \(label.padding(toLength: 9)) \(Int(rate)) acked writes/s  closed \(stats.closed)")
            guard stats.closed == 0 else { throw ServerHarness.Failure("\(targets[index].label): \(stats.closed) connections closed") }
            return rate
        }
        var this: [Double] = [], base: [Double] = [], ratios: [Double] = []
        for run in 0...runs {
            let label = run == 0 ? "warm-up" : "run \(run)/\(runs)"
            let order = run.isMultiple(of: 2) ? [1, 0] : [0, 1]
            var pair = [0.0, 0.0]
            for index in order { pair[index] = try rate(index, label) }
            guard run > 0 else { continue }
            this.append(pair[0])
            base.append(pair[1])
            ratios.append(pair[0] / pair[1])
            print("   ratio     \(label.padding(toLength: 9)) \(rounded(pair[0] / pair[1], places: 3))")
        }
        let ratio = RealtimeLoad.median(ratios)
        print("   paired ratios \(ratios.map { String(rounded($0, places: 3)) }.joined(separator: ", ")); median \(rounded(ratio, places: 3))")
        return BenchmarkResult(
            scenario: "ab.ws.writes", metric: "acknowledged durable writes per second, \(clients) clients, own listened paths",
            value: RealtimeLoad.median(this), unit: "writes/s",
            reference: "the same load on \(baseline), alternating rounds",
            referenceValue: RealtimeLoad.median(base),
            extras: [("medianPairedRatio", ratio)])
    }
}
