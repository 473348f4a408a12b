import Dispatch
import Foundation
import HearthCore
import HearthSQLite
import HearthStorage
import HearthTesting

#if canImport(Glibc)
    import Glibc
#endif

extension Scenario {
    /// Point-in-time restore from a base snapshot (issue 34's target: ≤ 60 s for a 1 GB namespace to an
    /// instant a day and 100,000 writes after its last backup): a namespace of 4,000,000 items (about
    /// 1 GB on disk; `HEARTH_BENCH_RESTORE_ITEMS` makes it smaller) backed up by `hearth serve
    /// --backup-every`, then 100,000 writes stamped a day later, then `hearth restore --at` the last of
    /// them `--from-backups` with the server stopped, into a new namespace, timed; against `hearth export`
    /// of the same namespace (reading it once).
    static let restoreTime = Scenario(
        name: "restore.time",
        summary: "hearth restore of a 1 GB namespace from its backup plus 100,000 later writes, against hearth export of it"
    ) { _ in
        let items = ProcessInfo.processInfo.environment["HEARTH_BENCH_RESTORE_ITEMS"].flatMap(Int.init) ?? 4_000_000
        let writes = 100_000
        let directory = ServerHarness.temporaryDirectory("restore")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let data = directory + "/data"
        let namespace = "big"
        let clock = ContinuousClock()

        // The namespace, imported.
        var started = clock.now
        do {
            let text = Node(String(repeating: "t", count: 200))
            var children: [(ChildKey, Node)] = (0..<items).map { index in (ChildKey("i\(index)"), Node(["n": Node(index), "text": text])) }
            children.sort { $0.0 < $1.0 }
            let engine = try SQLiteStorageEngine(directory: data, namespace: namespace)
            try engine.replaceAll(with: Node(["items": Node(children: ChildrenMap(sortedUniqueElements: children))]), progress: nil)
            engine.close()
        }
        let bytes = ((try? FileManager.default.attributesOfItem(atPath: data + "/\(namespace).sqlite"))?[.size] as? NSNumber)?.int64Value ?? 0
        print("   \(items) items imported, \(bytes / 1_000_000) MB, in \(String(format: "%.1f", (clock.now - started).seconds)) s")

        // Its backup, by the server's schedule.
        let binary = try ServerHarness.hearthBinary()
        let port = Loopback.freePort()
        started = clock.now
        let server = try ServerHarness.spawn(
            binary, ["serve", "--emulator", "--host", "127.0.0.1", "--port", "\(port)", "--data", data, "--backup-every", "1d"],
            log: directory + "/hearth.log")
        let manifests = data + "/backups/\(namespace)"
        while !(((try? FileManager.default.contentsOfDirectory(atPath: manifests)) ?? []).contains {
            FileManager.default.fileExists(atPath: manifests + "/\($0)/backup.json")
        }) {
            guard server.isRunning, (clock.now - started).seconds < 1800 else { throw ServerHarness.Failure("no backup of \(namespace) was made") }
            usleep(200_000)
        }
        ServerHarness.stop(server)
        print("   backed up (and verified) in \(String(format: "%.1f", (clock.now - started).seconds)) s")

        // A day later, 100,000 writes.
        let dayLater = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000
        do {
            let engine = try SQLiteStorageEngine(directory: data, namespace: namespace)
            let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
            let done = DispatchGroup()
            let writers = 64
            @Sendable func write(_ index: Int) {
                guard index < writes else { return done.leave() }
                let path = Path("items/i\(index * 37 % items)/n")
                let value = Node(-index)
                let note = ChangeFeedNote(time: dayLater + Int64(index / 100), path: path, data: .set(value), authType: .admin, channel: "rest")
                database.set(path, to: value, feed: note) { result in
                    if case .failure(let error) = result { fatalError("write failed: \(error)") }
                    write(index + writers)
                }
            }
            for writer in 0..<writers {
                done.enter()
                write(writer)
            }
            done.wait()
            engine.close()
        }
        let moment = dayLater + Int64(writes / 100)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let at = formatter.string(from: Date(timeIntervalSince1970: Double(moment) / 1000))

        // The restore, with the server stopped, against reading the namespace once.
        started = clock.now
        try HistoryWorkload.run(binary, ["restore", namespace, "--at", at, "--from-backups", "--into", "restored", "--data", data, "--url", "http://127.0.0.1:1"])
        let restore = (clock.now - started).seconds
        started = clock.now
        try HistoryWorkload.run(binary, ["export", namespace, "--data", data], output: "/dev/null")
        let export = (clock.now - started).seconds
        // The last write is there.
        let check = try SQLiteStorageEngine(directory: data, namespace: "restored", create: false)
        let restored = try check.load(progress: nil)
        check.close()
        let last = writes - 1
        guard restored.child(at: Path("items/i\(last * 37 % items)/n")) == Node(-last) else {
            throw ServerHarness.Failure("the restored namespace lacks the last write")
        }
        print("   restore \(String(format: "%.1f", restore)) s; export \(String(format: "%.1f", export)) s")
        return BenchmarkResult(
            scenario: "restore.time", metric: "seconds to restore a \(bytes / 1_000_000) MB namespace from its backup and \(writes) later writes",
            value: restore, unit: "s", reference: "hearth export of the same namespace", referenceValue: export)
    }
}

extension HistoryWorkload {
    /// Runs `hearth ARGUMENTS`, its standard output to `output` (a file) or discarded, and waits.
    static func run(_ binary: String, _ arguments: [String], output: String = "/dev/null") throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: output)
        let errors = Pipe()
        process.standardError = errors
        do { try process.run() } catch { throw ServerHarness.Failure("cannot start hearth \(arguments[0]): \(error)") }
        let said = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ServerHarness.Failure("hearth \(arguments[0]) failed: \(String(decoding: said.suffix(500), as: UTF8.self))")
        }
    }
}
