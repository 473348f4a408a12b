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
    .storageLoad,
    .wsFanout,
    .restReadWrite,
    .sseFanout,
    .rulesEval,
    .rulesWrite,
    .authSignIn,
    .authRefresh,
    .authVerify,
]

exit(BenchmarkRunner.main(arguments: Array(CommandLine.arguments.dropFirst()), scenarios: scenarios))
