import Dispatch
import HearthCore
import HearthSQLite
import HearthStorage
#if canImport(Glibc)
    import Glibc
#endif

/// Workloads for the SQLite storage engine (issue: durable storage). Files go to $HEARTH_BENCH_DIR or
/// /tmp/hearth-bench, on the disk whose fsync is being measured.
enum StorageWorkload {
    static var directory: String {
        let directory = getenv("HEARTH_BENCH_DIR").map { String(cString: $0) } ?? "/tmp/hearth-bench"
        mkdir(directory, 0o755)
        return directory
    }

    static func removeDatabase(_ namespace: String) {
        for suffix in ["", "-wal", "-shm"] { unlink(directory + "/" + namespace + ".sqlite" + suffix) }
    }

    /// Bytes this process has caused to be written to storage (/proc/self/io `write_bytes`).
    static func diskBytesWritten() -> Int {
        guard let file = fopen("/proc/self/io", "r") else { return 0 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, 256, file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("write_bytes:") {
                return Int(String(text.dropFirst("write_bytes:".count).filter { $0.isNumber })) ?? 0
            }
        }
        return 0
    }

    static let groups = 1000, leavesPerGroup = 1000

    /// `{"items": {"group0": {"item0": "xxx…0-0", …}, …}}`: 1,000 groups of 1,000 leaves of 60-odd bytes
    /// (~100 MB stored), what the load and start scenarios open.
    static func millionLeaves() -> Node {
        let text = String(repeating: "x", count: 60)
        var groupEntries: [(key: ChildKey, value: Node)] = []
        for g in 0..<groups {
            var leaves = (0..<leavesPerGroup).map { (key: ChildKey("item\($0)"), value: Node("\(text)\(g)-\($0)")) }
            leaves.sort { $0.key < $1.key }
            groupEntries.append((ChildKey("group\(g)"), Node(children: ChildrenMap(sortedUniqueElements: leaves))))
        }
        groupEntries.sort { $0.key < $1.key }
        return Node(["items": Node(children: ChildrenMap(sortedUniqueElements: groupEntries))])
    }

    /// CPU seconds (user + system) this process has used, all threads.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}

extension Scenario {
    /// 64 writers, each with one write in flight, 100-byte values at distinct paths, acknowledged only once
    /// durable; against raw SQLite inserting the same rows in the same transactions.
    static let storageWrite = Scenario(
        name: "storage.write",
        summary: "64 concurrent writers of 100-byte values to distinct paths, durable acks (WAL, synchronous=FULL)"
    ) { context in
        let writers = 64, writesPerWriter = 2_000, total = writers * writesPerWriter
        let value = String(repeating: "v", count: 100)
        var groupSizes: [Int] = []
        var amplification = 0.0
        var run = 0
        let hearth = try context.measure("Hearth DurableDatabase+SQLite") {
            run += 1
            StorageWorkload.removeDatabase("write")
            let engine = try SQLiteStorageEngine(directory: StorageWorkload.directory, namespace: "write")
            let database = DurableDatabase(engine: engine, root: .empty)
            let done = DispatchSemaphore(value: 0)
            let writtenBefore = StorageWorkload.diskBytesWritten()
            let cpuBefore = StorageWorkload.cpuSeconds()
            @Sendable func write(_ writer: Int, _ index: Int) {
                guard index < writesPerWriter else {
                    done.signal()
                    return
                }
                database.set(Path("bench/w\(writer)/k\(index)"), to: Node(value)) { result in
                    if case .failure(let error) = result { fatalError("write failed: \(error)") }
                    write(writer, index + 1)
                }
            }
            for writer in 0..<writers { write(writer, 0) }
            for _ in 0..<writers { done.wait() }
            let written = StorageWorkload.diskBytesWritten() - writtenBefore
            let cpu = StorageWorkload.cpuSeconds() - cpuBefore
            let statistics = engine.commitStatistics
            engine.close()
            groupSizes = statistics.groupSizes
            amplification = Double(written) / Double(total * 100)
            print("   run \(run): \(statistics.commits) commits, \(rounded(Double(statistics.batches) / Double(max(1, statistics.commits)), places: 1)) writes per commit, \(written) bytes written to disk = \(rounded(amplification, places: 2)) × the 100-byte payload, \(rounded(cpu * 1e6 / Double(total), places: 1)) µs CPU per write (all threads)")
        }
        // The same rows (encoded paths, in the order the engine committed them is not tracked: writer
        // order round-robin, which is how the 64 writers interleave) in the same group sizes.
        var rows: [(path: [UInt8], value: String)] = []
        rows.reserveCapacity(total)
        for index in 0..<writesPerWriter {
            for writer in 0..<writers { rows.append((SQLiteReference.encodedPath(["bench", "w\(writer)", "k\(index)"]), value)) }
        }
        let referencePath = StorageWorkload.directory + "/reference.sqlite"
        var referenceWritten = 0
        var referenceCPU = 0.0
        let reference = try context.measure("raw SQLite, same batches") {
            let before = StorageWorkload.diskBytesWritten()
            let cpuBefore = StorageWorkload.cpuSeconds()
            blackHole(try SQLiteReference.insert(rows: rows, groupSizes: groupSizes, path: referencePath))
            referenceWritten = StorageWorkload.diskBytesWritten() - before
            referenceCPU = StorageWorkload.cpuSeconds() - cpuBefore
        }
        print("   write amplification: Hearth \(rounded(amplification, places: 2)), raw SQLite \(rounded(Double(referenceWritten) / Double(total * 100), places: 2)) (disk bytes per payload byte, last run); raw SQLite \(rounded(referenceCPU * 1e6 / Double(total), places: 1)) µs CPU per row")
        StorageWorkload.removeDatabase("write")
        StorageWorkload.removeDatabase("reference")
        return BenchmarkResult(
            scenario: "storage.write", metric: "acknowledged durable writes per second",
            value: Double(total) / hearth.median.seconds, unit: "writes/s",
            reference: "raw SQLite inserts, same rows and transactions",
            referenceValue: Double(total) / reference.median.seconds)
    }

    /// Startup on a 1M-leaf database: open (after a clean shutdown) and load into a tree, against stepping
    /// through the same rows without building anything.
    static let storageLoad = Scenario(
        name: "storage.load",
        summary: "Open (clean shutdown: no quick_check) and load a 1M-leaf (~100 MB) database into the tree"
    ) { context in
        let (groups, leavesPerGroup) = (StorageWorkload.groups, StorageWorkload.leavesPerGroup)
        StorageWorkload.removeDatabase("load")
        let root = StorageWorkload.millionLeaves()
        let setup = try SQLiteStorageEngine(directory: StorageWorkload.directory, namespace: "load")
        try setup.replaceAll(with: root, progress: nil)
        let bytes = setup.fileByteCount
        setup.close()
        print("   database: \(root.leafCount) leaves, \(bytes) bytes")
        // Timed: open (no quick_check: the file was closed cleanly) and load, as at startup. Checking the
        // previous run's tree and freeing it happen before the next run, untimed (a server keeps its
        // tree). The freed memory is reused, so page faults for a fresh process's tree are not timed
        // either; docs/BENCHMARKS.md has that figure.
        var loaded: Node? = nil
        let hearth = try context.measure("Hearth open + load", prepare: {
            if let tree = loaded { precondition(tree.leafCount == groups * leavesPerGroup) }
            loaded = nil
        }) {
            let engine = try SQLiteStorageEngine(directory: StorageWorkload.directory, namespace: "load")
            precondition(!engine.checkedIntegrity)
            loaded = try engine.load(progress: nil)
            engine.close()
        }
        loaded = nil
        // After an unclean shutdown (the -wal file is there) the open adds PRAGMA quick_check, which
        // reads the whole file once more. Measured once, for the record.
        let clock = ContinuousClock()
        let checkedStart = clock.now
        let checked = try SQLiteStorageEngine(directory: StorageWorkload.directory, namespace: "load", verify: .always)
        precondition(checked.checkedIntegrity)
        let checkedTree = try checked.load(progress: nil)
        let checkedTime = clock.now - checkedStart
        checked.close()
        precondition(checkedTree.leafCount == groups * leavesPerGroup)
        print("   open with quick_check (after an unclean shutdown) + load: \(checkedTime)")
        let path = StorageWorkload.directory + "/load.sqlite"
        let reference = try context.measure("raw SQLite, read rows only") {
            let rows = try SQLiteReference.readAllRows(path: path)
            precondition(rows == groups * leavesPerGroup)
        }
        StorageWorkload.removeDatabase("load")
        return BenchmarkResult(
            scenario: "storage.load", metric: "startup time for 1M leaves", value: hearth.median.seconds * 1000,
            unit: "ms", reference: "raw SQLite stepping through the rows", referenceValue: reference.median.seconds * 1000)
    }
}
