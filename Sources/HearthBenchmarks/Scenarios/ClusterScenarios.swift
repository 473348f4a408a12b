import Dispatch
import Foundation
import HearthCore
import HearthPostgres
import HearthSQLite
import HearthStorage
import HearthTesting
import Synchronization

/// Two "nodes" in one process: each a PostgreSQL engine and a database following the other's commits
/// over one namespace, as `hearth serve --storage postgresql://…` runs them (docs/scaling.md). The
/// PostgreSQL server is a private one on this machine (TemporaryPostgres: Debian's postgresql, fsync on).
enum ClusterWorkload {
    static let server = Mutex<TemporaryPostgres?>(nil)

    /// The process's PostgreSQL, started on first use.
    static func postgres() throws -> TemporaryPostgres {
        try server.withLock { server in
            if let server { return server }
            let started = try TemporaryPostgres()
            // Hearth's tables, made by the first engine, before anything clears them.
            try PostgresStorageEngine(url: started.url, namespace: "setup").close()
            server = started
            return started
        }
    }

    final class Node: Sendable {
        let engine: PostgresStorageEngine
        let database: DurableDatabase
        init(url: String, namespace: String, onRemote: @escaping @Sendable (DurableDatabase.RemoteWrite) -> Void = { _ in }) throws {
            engine = try PostgresStorageEngine(url: url, namespace: namespace)
            database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
            database.follow(onRemote)
        }
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}

extension Scenario {
    /// 64 writers (32 on each of two nodes), one write in flight each, 100-byte values at distinct paths
    /// in one namespace, acknowledged once PostgreSQL committed them; against one connection making the
    /// same inserts (change-log row and records) in the same transactions, and the records alone.
    static let clusterWrite = Scenario(
        name: "cluster.write",
        summary: "64 writers over 2 nodes into one namespace on PostgreSQL, durable acks (target ≥ 10,000/s and ≥ 0.5× raw)"
    ) { context in
        let postgres = try ClusterWorkload.postgres()
        let writersPerNode = 32, writesPerWriter = 500, total = 2 * writersPerNode * writesPerWriter
        let value = String(repeating: "v", count: 100)
        var groupSizes: [Int] = []
        var run = 0
        let hearth = try context.measure("Hearth, 2 nodes") {
            run += 1
            let namespace = "cluster-write"
            try PostgresReference.clear(url: postgres.url, namespace: namespace)
            let nodes = [try ClusterWorkload.Node(url: postgres.url, namespace: namespace), try ClusterWorkload.Node(url: postgres.url, namespace: namespace)]
            let done = DispatchSemaphore(value: 0)
            @Sendable func write(_ node: Int, _ writer: Int, _ index: Int) {
                guard index < writesPerWriter else {
                    done.signal()
                    return
                }
                nodes[node].database.set(Path("bench/n\(node)w\(writer)/k\(index)"), to: Node(value)) { result in
                    if case .failure(let error) = result { fatalError("write failed: \(error)") }
                    write(node, writer, index + 1)
                }
            }
            for writer in 0..<writersPerNode { for node in 0..<2 { write(node, writer, 0) } }
            for _ in 0..<(2 * writersPerNode) { done.wait() }
            let statistics = nodes.map(\.engine.commitStatistics)
            nodes.forEach { $0.engine.close() }
            groupSizes = statistics.flatMap(\.groupSizes)
            let commits = statistics.map(\.commits).reduce(0, +)
            let superseded = statistics.map(\.supersededCommits).reduce(0, +)
            let recommitted = statistics.map(\.recommittedCommits).reduce(0, +)
            print("   run \(run): \(commits) commits, \(rounded(Double(total) / Double(max(1, commits)), places: 1)) writes per commit; \(superseded) found their sequence taken by the other node: \(recommitted) sent again unchanged (the writes commute), \(superseded - recommitted) decided again")
        }
        var paths: [Path] = []
        for index in 0..<writesPerWriter {
            for writer in 0..<writersPerNode { for node in 0..<2 { paths.append(Path("bench/n\(node)w\(writer)/k\(index)")) } }
        }
        // The inserts of Hearth's commits (a change-log row and the records per transaction), and the
        // records alone beside them.
        let reference = try context.measure("raw PostgreSQL, same inserts and transactions") {
            try PostgresReference.clear(url: postgres.url, namespace: "cluster-reference")
            blackHole(try PostgresReference.upsert(
                url: postgres.url, namespace: "cluster-reference", paths: paths, value: value, groupSizes: groupSizes, changeLog: true))
        }
        let recordsOnly = try context.measure("raw PostgreSQL, the records alone") {
            try PostgresReference.clear(url: postgres.url, namespace: "cluster-reference")
            blackHole(try PostgresReference.upsert(url: postgres.url, namespace: "cluster-reference", paths: paths, value: value, groupSizes: groupSizes))
        }
        let recordsOnlyRate = Double(total) / recordsOnly.median.seconds
        let rate = Double(total) / hearth.median.seconds
        print("   against the records alone (no change-log row): \(Int(recordsOnlyRate)) rows/s, ratio \(rounded(rate / recordsOnlyRate, places: 3))")
        return BenchmarkResult(
            scenario: "cluster.write", metric: "acknowledged durable writes per second through 2 nodes",
            value: rate, unit: "writes/s",
            reference: "raw PostgreSQL, one connection: the same inserts (a change-log row and the records) in the same transactions",
            referenceValue: Double(total) / reference.median.seconds,
            extras: [("recordsOnlyReference", recordsOnlyRate), ("recordsOnlyRatio", rate / recordsOnlyRate)])
    }

    /// One writer on node A keeping 8 writes in flight, 9,000 listeners of its location, half on node A
    /// and half on node B (`hearth serve --storage` on one PostgreSQL), as ws.fanout measures one node;
    /// beside it, that one node on SQLite with the same load.
    static let clusterFanout = Scenario(
        name: "cluster.fanout",
        summary: "1 writer on node A → 9,000 listeners over 2 nodes on PostgreSQL: deliveries/s against one node on SQLite (target ≥ 0.8×)"
    ) { context in
        let settings = RealtimeLoad.FanoutSettings()
        let runs = context.configuration.measuredRunCount
        let postgres = try ClusterWorkload.postgres()
        try PostgresReference.clear(url: postgres.url, namespace: "bench")
        print("   \(settings.listenerCount) listeners, \(Int(settings.seconds)) s per run, \(settings.window) writes in flight, \(RealtimeLoad.workerCount) client processes")
        func measure(_ target: LoadTarget) throws -> (rates: [Double], closed: Int) {
            defer { target.stop() }
            let fleet = try RealtimeLoad.listeners(target, count: settings.listenerCount)
            defer { fleet.stop() }
            return try RealtimeLoad.throughputRuns(target, fleet: fleet, window: settings.window, seconds: settings.seconds, runs: runs)
        }
        let cluster = try measure(try LoadTarget.cluster(name: "cluster-fanout", url: postgres.url))
        let single = try measure(try LoadTarget.hearth(name: "cluster-fanout-sqlite"))
        print("   deliveries/s per run: 2 nodes \(cluster.rates.map { String(Int($0)) }.joined(separator: ", ")); one node on SQLite \(single.rates.map { String(Int($0)) }.joined(separator: ", "))")
        return BenchmarkResult(
            scenario: "cluster.fanout", metric: "deliveries per second, 1 writer on node A → \(settings.listenerCount) listeners over 2 nodes",
            value: RealtimeLoad.median(cluster.rates), unit: "messages/s",
            reference: "one hearth node on SQLite, the same writer and listeners", referenceValue: RealtimeLoad.median(single.rates),
            extras: [("closed", Double(cluster.closed))])
    }

    /// 500 writes/s on node A, each timed until node B's tree has it (B's database tells of the remote
    /// commit, where a server fans it out); beside it, the same writes' durable acknowledgement on A.
    static let clusterLatency = Scenario(
        name: "cluster.latency",
        summary: "500 writes/s on node A: p99 from the write to node B having it (target ≤ 20 ms)"
    ) { context in
        let postgres = try ClusterWorkload.postgres()
        let writes = 2_000, interval = 0.002
        struct Run { var remote: [Double]; var local: [Double] }
        func once(_ label: String) throws -> Run {
            let namespace = "cluster-latency"
            try PostgresReference.clear(url: postgres.url, namespace: namespace)
            let sent = Mutex<[ContinuousClock.Instant?]>(Array(repeating: nil, count: writes))
            let remote = Mutex<[Double]>([]), local = Mutex<[Double]>([])
            let a = try ClusterWorkload.Node(url: postgres.url, namespace: namespace)
            let b = try ClusterWorkload.Node(url: postgres.url, namespace: namespace) { write in
                let now = ContinuousClock.now
                for location in write.locations {
                    guard let key = location.last?.string, key.hasPrefix("k"), let index = Int(key.dropFirst()), index < writes,
                        let start = sent.withLock({ $0[index] })
                    else { continue }
                    remote.withLock { $0.append((now - start).milliseconds) }
                }
            }
            let done = DispatchSemaphore(value: 0)
            let start = ContinuousClock.now
            for index in 0..<writes {
                let due = start + .seconds(interval * Double(index))
                if due > .now { Thread.sleep(forTimeInterval: (due - .now).milliseconds / 1000) }
                let began = ContinuousClock.now
                sent.withLock { $0[index] = began }
                a.database.set(Path("lat/k\(index)"), to: Node(index)) { result in
                    if case .failure(let error) = result { fatalError("write failed: \(error)") }
                    local.withLock { $0.append((ContinuousClock.now - began).milliseconds) }
                    done.signal()
                }
            }
            for _ in 0..<writes { done.wait() }
            let deadline = ContinuousClock.now + .seconds(5)
            while remote.withLock({ $0.count }) < writes && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
            a.engine.close()
            b.engine.close()
            let result = Run(remote: remote.withLock { $0 }.sorted(), local: local.withLock { $0 }.sorted())
            let p = ClusterWorkload.percentile
            print("   \(label.padding(toLength: 12)) A→B p50 \(rounded(p(result.remote, 0.5), places: 2)) ms  p99 \(rounded(p(result.remote, 0.99), places: 2)) ms  delivered \(result.remote.count)/\(writes);  ack on A p50 \(rounded(p(result.local, 0.5), places: 2)) ms  p99 \(rounded(p(result.local, 0.99), places: 2)) ms")
            return result
        }
        _ = try once("warm-up")
        var runs: [Run] = []
        for index in 1...context.configuration.measuredRunCount { runs.append(try once("run \(index)")) }
        let p99s = runs.map { ClusterWorkload.percentile($0.remote, 0.99) }.sorted()
        let localP99s = runs.map { ClusterWorkload.percentile($0.local, 0.99) }.sorted()
        return BenchmarkResult(
            scenario: "cluster.latency", metric: "p99 write on node A to node B having it, 500 writes/s",
            value: p99s[p99s.count / 2], unit: "ms",
            reference: "p99 of the same writes' durable acknowledgement on A", referenceValue: localP99s[localP99s.count / 2])
    }

    /// A node joining a namespace of 1M leaves in PostgreSQL: connect, load the snapshot, start
    /// following; against the SQLite engine opening and loading the same tree.
    static let clusterStart = Scenario(
        name: "cluster.start",
        summary: "A node opens a 1M-leaf namespace on PostgreSQL and is serving it (target ≤ 5 s)"
    ) { context in
        let postgres = try ClusterWorkload.postgres()
        let (groups, leavesPerGroup) = (StorageWorkload.groups, StorageWorkload.leavesPerGroup)
        let root = StorageWorkload.millionLeaves()
        let clock = ContinuousClock()
        let importStart = clock.now
        let setup = try PostgresStorageEngine(url: postgres.url, namespace: "cluster-start")
        try setup.replaceAll(with: root, progress: nil)
        try setup.compact()  // fresh planner statistics, as autovacuum would have made by the time a node joins
        setup.close()
        print("   imported \(root.leafCount) leaves into PostgreSQL in \(rounded((clock.now - importStart).seconds, places: 1)) s")
        StorageWorkload.removeDatabase("cluster-start")
        let sqlite = try SQLiteStorageEngine(directory: StorageWorkload.directory, namespace: "cluster-start")
        try sqlite.replaceAll(with: root, progress: nil)
        sqlite.close()
        var loaded: ClusterWorkload.Node?
        let hearth = try context.measure("Hearth node on PostgreSQL", prepare: { loaded = nil }) {
            loaded = try ClusterWorkload.Node(url: postgres.url, namespace: "cluster-start")
            precondition(loaded?.database.root.leafCount == groups * leavesPerGroup)
        }
        loaded?.engine.close()
        loaded = nil
        var tree: Node?
        let reference = try context.measure("SQLite open + load", prepare: { tree = nil }) {
            let engine = try SQLiteStorageEngine(directory: StorageWorkload.directory, namespace: "cluster-start", verify: .never)
            tree = try engine.load(progress: nil)
            engine.close()
        }
        blackHole(tree)
        StorageWorkload.removeDatabase("cluster-start")
        return BenchmarkResult(
            scenario: "cluster.start", metric: "seconds until a joining node serves a 1M-leaf namespace",
            value: hearth.median.seconds, unit: "s",
            reference: "SQLite engine open + load of the same tree", referenceValue: reference.median.seconds)
    }
}

extension Duration {
    fileprivate var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}

extension LoadTarget {
    /// Two `hearth serve` nodes on one PostgreSQL: the writer connects to node A, listeners to both.
    static func cluster(name: String, url: String) throws(ServerHarness.Failure) -> LoadTarget {
        let a = try ServerHarness.startHearth(name: name + "-a", arguments: ["--storage", url, "--node", "a"])
        let b: (process: Process, port: Int, directory: String)
        do {
            b = try ServerHarness.startHearth(name: name + "-b", arguments: ["--storage", url, "--node", "b"])
        } catch {
            ServerHarness.stop(a.process)
            throw error
        }
        return LoadTarget(
            label: "2 nodes", wire: .realtime, port: a.port, pid: a.process.processIdentifier, credential: "owner",
            fanPath: "/fan", writePath: "/w",
            stop: {
                for node in [a, b] {
                    ServerHarness.stop(node.process)
                    try? FileManager.default.removeItem(atPath: node.directory)
                }
            },
            listenerPorts: [a.port, b.port])
    }
}
