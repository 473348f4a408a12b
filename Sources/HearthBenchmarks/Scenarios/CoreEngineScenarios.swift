import HearthCore
import HearthSupport

/// Workloads for the tree engine's write and query paths (issue: HearthCore benchmarks).
enum CoreEngineWorkload {
    /// `groups` locations of `leavesPerGroup` integer leaves each, under `/items`.
    static func groupedTree(groups: Int, leavesPerGroup: Int) -> DatabaseTree {
        var groupEntries: [(key: ChildKey, value: Node)] = []
        for g in 0..<groups {
            var leaves = (0..<leavesPerGroup).map { (key: ChildKey("k\($0)"), value: Node($0)) }
            leaves.sort { $0.key < $1.key }
            groupEntries.append((ChildKey("g\(g)"), Node(children: ChildrenMap(sortedUniqueElements: leaves))))
        }
        groupEntries.sort { $0.key < $1.key }
        var tree = DatabaseTree()
        try! tree.set("items", to: Node(children: ChildrenMap(sortedUniqueElements: groupEntries)))
        return tree
    }

    /// Applies each update and its listeners' events, recording each one's latency. Not inlined,
    /// so profilers can single out the measured loop.
    @inline(never)
    static func updateEach(
        _ plan: [(path: Path, score: Int)], tree: inout DatabaseTree, view: inout View,
        latencies: inout [Duration]
    ) throws {
        let clock = ContinuousClock()
        for step in plan {
            let start = clock.now
            let change = try tree.set(step.path, to: Node(step.score))
            blackHole(view.apply(change, tree: tree))
            latencies.append(clock.now - start)
        }
    }

    /// Writes `i` at `writes[i].path` and computes the events of the view at its group, the only
    /// listener the write reaches (`views[g]` listens at `items/g<g>`); returns how many events.
    /// Not inlined, so profilers can single out the measured loop.
    @inline(never)
    static func writeEach(_ writes: [(path: Path, group: Int)], tree: inout DatabaseTree, views: inout [View]) throws -> Int {
        var events = 0
        for (i, write) in writes.enumerated() {
            let change = try tree.set(write.path, to: Node(i))
            events += views[write.group].apply(change, tree: tree).count
        }
        return events
    }
}

extension Scenario {
    /// Single-key writes into a 1M-leaf tree with one default listener per 1,000 leaves, events computed.
    static let coreWrite = Scenario(
        name: "core.write",
        summary: "Single-key writes into a 1M-leaf tree, one listener per 1,000 paths, events computed"
    ) { context in
        let groups = 1000, leavesPerGroup = 1000, writes = 200_000
        var random = SplitMix64(seed: 11)
        let targets = (0..<writes).map { _ in
            (group: random.next(below: groups), key: random.next(below: leavesPerGroup))
        }
        let plan = targets.map { (path: Path("items/g\($0.group)/k\($0.key)"), group: $0.group) }

        var tree = CoreEngineWorkload.groupedTree(groups: groups, leavesPerGroup: leavesPerGroup)
        var views = (0..<groups).map { View(path: Path("items/g\($0)"), tree: tree) }
        var events = 0
        let hearth = try context.measure("HearthCore + events") {
            events += try CoreEngineWorkload.writeEach(plan, tree: &tree, views: &views)
        }
        precondition(events >= 2 * writes, "every write raises child_changed and value")

        // Reference: the same writes into nested Swift dictionaries: no snapshots, no events.
        var plain: [String: [String: Int]] = [:]
        for g in 0..<groups {
            var leaves: [String: Int] = [:]
            for k in 0..<leavesPerGroup { leaves["k\(k)"] = k }
            plain["g\(g)"] = leaves
        }
        let groupNames = targets.map { "g\($0.group)" }, keyNames = targets.map { "k\($0.key)" }
        let reference = context.measure("Swift nested Dictionary") {
            for i in 0..<writes { plain[groupNames[i], default: [:]][keyNames[i]] = i }
        }
        blackHole(plain)
        return BenchmarkResult(
            scenario: "core.write", metric: "writes per second with events", value: Double(writes) / hearth.median.seconds,
            unit: "writes/s", reference: "Swift nested Dictionary, no events",
            referenceValue: Double(writes) / reference.median.seconds)
    }

    /// limitToLast(50) ordered by child over 1M children: time from an update to its events.
    static let coreQuery = Scenario(
        name: "core.query",
        summary: "limitToLast(50) by child over 1M children, 10k random updates, update-to-events latency"
    ) { context in
        let childCount = 1_000_000, updates = 10_000
        var random = SplitMix64(seed: 12)
        var entries = (0..<childCount).map { i in
            (key: ChildKey("c\(i)"), value: Node(["score": Node(random.next(below: 1_000_000))]))
        }
        entries.sort { $0.key < $1.key }
        var tree = DatabaseTree()
        try tree.set("scores", to: Node(children: ChildrenMap(sortedUniqueElements: entries)))
        let params = QueryParams(index: .child("score"), limit: QueryLimit(count: 50, anchor: .last))
        tree.ensureIndex(at: "scores", by: params.index)
        var view = View(path: "scores", params: params, tree: tree)

        let plan = (0..<updates).map { _ in
            (path: Path("scores/c\(random.next(below: childCount))/score"), score: random.next(below: 1_100_000))
        }
        let clock = ContinuousClock()
        var latencies: [Duration] = []
        var referenceLatencies: [Duration] = []
        _ = try context.measure("HearthCore update + events") {
            latencies.removeAll(keepingCapacity: true)
            try CoreEngineWorkload.updateEach(plan, tree: &tree, view: &view, latencies: &latencies)
        }
        // Reference: the same updates to a tree with no index and no listener.
        var bare = DatabaseTree(root: tree.root)
        _ = try context.measure("HearthCore update alone") {
            referenceLatencies.removeAll(keepingCapacity: true)
            for step in plan {
                let start = clock.now
                blackHole(try bare.set(step.path, to: Node(step.score)))
                referenceLatencies.append(clock.now - start)
            }
        }
        let p99 = percentile(latencies, 0.99), p50 = percentile(latencies, 0.50)
        let referenceP99 = percentile(referenceLatencies, 0.99)
        print("   update-to-events p50 \(rounded(p50, places: 2)) µs, p99 \(rounded(p99, places: 2)) µs (last run)")
        return BenchmarkResult(
            scenario: "core.query", metric: "p99 update-to-events latency", value: p99, unit: "µs",
            reference: "the same update with no index or listener", referenceValue: referenceP99)
    }
}

/// The `fraction` percentile of `durations`, in microseconds.
func percentile(_ durations: [Duration], _ fraction: Double) -> Double {
    let sorted = durations.sorted()
    guard !sorted.isEmpty else { return 0 }
    let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
    return sorted[max(0, index)].seconds * 1_000_000
}
