// hearth-bench: runs Hearth's benchmark scenarios and prints one JSON result line per scenario.
//
// Usage: hearth-bench [--runs N] [--document-bytes N] [--seed N] [--list] [scenario-or-prefix ...]
// Build it with `swift build -c release --product hearth-bench`, or run `make bench SCENARIO=name`.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every scenario this build knows, in the order `hearth-bench` runs them. To add one, write
/// `extension Scenario { static let name = Scenario(...) }` in `Scenarios/` and list it here.
let scenarios: [Scenario] = [
    .referenceJSONSerialization,
    .coreParse,
    .coreSerialize,
    .coreMemory,
    .coreWrite,
    .coreQuery,
    .storageWrite,
    .storageWriteFeed, .feedEntry,
    .functionsThroughput, .hooksLatency, .historyQuery, .historyQueryPostgres, .restoreTime,
    .storageLoad,
    .wsFanout,
    .wsLatency,
    .wsIdle,
    .wsWrites, .abWsWrites,
    .wsReconnect,
    .restReadWrite,
    .consoleOpen,
    .sseFanout,
    .sseLatency,
    .rulesEval,
    .rulesWrite,
    .wsFanoutRules,
    .authSignIn,
    .authRefresh,
    .authVerify,
    .authIdp,
    .authPostgres,
    .clientLocal,
    .clientSync,
    .clientRoundTrip,
    .clientOffline,
    .clusterWrite,
    .clusterFanout,
    .clusterLatency,
    .clusterStart,
]

// `hearth-bench --worker …` is one process of the realtime load generator, started by the ws.* scenarios.
if CommandLine.arguments.dropFirst().first == "--worker" {
    exit(LoadWorker.main(arguments: Array(CommandLine.arguments.dropFirst(2))))
}

exit(BenchmarkRunner.main(arguments: Array(CommandLine.arguments.dropFirst()), scenarios: scenarios))
