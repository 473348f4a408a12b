import Dispatch
import Foundation
import HearthCore
import HearthPostgres
import HearthSQLite
import HearthStorage
import HearthTesting

#if canImport(Glibc)
    import Glibc
#endif

extension Scenario {
    /// A location's history in a big namespace (issue 34's target: p99 ≤ 50 ms for one location's last 100
    /// changes among 10 million): a namespace written 10 million times (100,000 locations, each 100 times,
    /// interleaved; `HEARTH_BENCH_HISTORY_CHANGES` makes it smaller) by 64 writers through the engine, then
    /// served by `hearth serve`; the first history request starts the feed's location index, which is
    /// waited for, then `GET /.history.json?path=/h/lN&limit=100` for random locations is timed against a
    /// plain REST read of the same location (the floor of any request).
    static let historyQuery = Scenario(
        name: "history.query",
        summary: "GET /.history.json for one location's last 100 changes in a namespace with 10 million changes, against a REST read"
    ) { context in
        try historyQuery(context, name: "history.query", storage: nil)
    }

    /// ``historyQuery`` with the namespace in PostgreSQL (`hearth serve --storage`, the benchmark's own
    /// PostgreSQL on loopback), where the location index is `hearth_feed_locations`.
    static let historyQueryPostgres = Scenario(
        name: "history.query.postgres",
        summary: "history.query with the namespace in PostgreSQL (hearth serve --storage)"
    ) { context in
        try historyQuery(context, name: "history.query.postgres", storage: try ClusterWorkload.postgres().url)
    }

    private static func historyQuery(_ context: BenchmarkContext, name: String, storage: String?) throws -> BenchmarkResult {
        let changes = ProcessInfo.processInfo.environment["HEARTH_BENCH_HISTORY_CHANGES"].flatMap(Int.init) ?? 10_000_000
        let locations = max(1, changes / 100)
        let directory = ServerHarness.temporaryDirectory("history")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let namespace = "bench-default-rtdb"
        let retention = ChangeFeedRetention(maxAgeMilliseconds: 3650 * 86_400_000, maxBytes: 1 << 40)
        let engine: any StorageEngine = try storage.map { try PostgresStorageEngine(url: $0, namespace: namespace, feedRetention: retention) }
            ?? SQLiteStorageEngine(directory: directory + "/data", namespace: namespace, feedRetention: retention)
        try HistoryWorkload.write(changes: changes, locations: locations, into: engine)

        let binary = try ServerHarness.hearthBinary()
        let port = Loopback.freePort()
        let server = try ServerHarness.spawn(
            binary, ["serve", "--emulator", "--host", "127.0.0.1", "--port", "\(port)", "--data", directory + "/data", "--project", "bench",
                     "--feed-max-bytes", "\(retention.maxBytes)", "--feed-max-age", "3650d"] + (storage.map { ["--storage", $0] } ?? []),
            log: directory + "/hearth.log")
        defer { ServerHarness.stop(server) }
        try ServerHarness.waitForListener(port: port, process: server, seconds: 300)
        do {
            return try measureHistory(context, name: name, port: port, changes: changes, locations: locations)
        } catch {
            // What the server said is the first thing to read about a failure; its directory goes with the run.
            let log = (try? String(contentsOfFile: directory + "/hearth.log", encoding: .utf8)) ?? ""
            print("   the server's log ends:\n" + log.split(separator: "\n").suffix(30).joined(separator: "\n"))
            throw error
        }
    }

    /// The first request (which starts the index) until the index answers, then the timed rounds.
    private static func measureHistory(_ context: BenchmarkContext, name: String, port: Int, changes: Int, locations: Int) throws -> BenchmarkResult {
        // The index is built on the first request, in the background; requests scan the feed meanwhile.
        let clock = ContinuousClock()
        let building = clock.now
        while true {
            let (status, body) = try HistoryWorkload.get(port: port, "/.history.json?path=/h/l7&limit=100")
            guard status == 200 else { throw ServerHarness.Failure("history answered \(status): \(String(decoding: body.prefix(300), as: UTF8.self))") }
            if let scanned = HistoryWorkload.number("scanned", in: body), scanned <= 100 { break }
            if (clock.now - building).seconds > 1800 { throw ServerHarness.Failure("the location index was not built within 30 minutes") }
            usleep(500_000)
        }
        print("   location index built in \(String(format: "%.1f", (clock.now - building).seconds)) s for \(changes) changes")

        var random = SystemRandomNumberGenerator()
        let targets = (0..<300).map { _ in Int.random(in: 0..<locations, using: &random) }
        func timed(_ target: (Int) -> String) throws -> [Double] {
            var milliseconds: [Double] = []
            for location in targets {
                let start = clock.now
                let (status, body) = try HistoryWorkload.get(port: port, target(location))
                milliseconds.append((clock.now - start).seconds * 1000)
                guard status == 200 else { throw ServerHarness.Failure("answered \(status): \(String(decoding: body.prefix(300), as: UTF8.self))") }
            }
            return milliseconds.sorted()
        }
        // Alternating, so that both see the same moments of the machine.
        var history: [Double] = [], reads: [Double] = []
        for _ in 0..<context.configuration.measuredRunCount {
            history += try timed { "/.history.json?path=/h/l\($0)&limit=100" }
            reads += try timed { "/h/l\($0).json" }
        }
        history.sort()
        reads.sort()
        func percentile(_ sorted: [Double], _ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        print("   history p50 \(String(format: "%.2f", percentile(history, 0.5))) ms, p99 \(String(format: "%.2f", percentile(history, 0.99))) ms; REST read p50 \(String(format: "%.2f", percentile(reads, 0.5))) ms, p99 \(String(format: "%.2f", percentile(reads, 0.99))) ms")
        return BenchmarkResult(
            scenario: name, metric: "p99 of GET /.history.json (one location's last 100 changes, \(changes) changes in the namespace)",
            value: percentile(history, 0.99), unit: "ms", reference: "p99 of a REST GET of the same location",
            referenceValue: percentile(reads, 0.99), extras: [("p50", percentile(history, 0.5)), ("changes", Double(changes))])
    }
}

/// The history benchmark's namespace and requests.
enum HistoryWorkload {
    /// `changes` sets spread over `locations` (`/h/l0…`), each with a feed entry, by 64 writers through a
    /// durable database on `engine`, which is closed after.
    static func write(changes: Int, locations: Int, into engine: any StorageEngine) throws {
        let database = DurableDatabase(engine: engine, root: .empty)
        let writers = 64
        let done = DispatchGroup()
        let clock = ContinuousClock()
        let start = clock.now
        let progress = Progress(changes: changes)
        @Sendable func write(_ index: Int) {
            guard index < changes else { return done.leave() }
            let path = Path("h/l\(index % locations)")
            let value = Node(index)
            let note = ChangeFeedNote(time: 1_796_000_000_000 + Int64(index / 1000), path: path, data: .set(value), authType: .admin, channel: "rest")
            database.set(path, to: value, feed: note) { result in
                if case .failure(let error) = result { fatalError("write failed: \(error)") }
                progress.count()
                write(index + writers)
            }
        }
        for writer in 0..<writers {
            done.enter()
            write(writer)
        }
        done.wait()
        engine.close()
        print("   wrote \(changes) changes over \(locations) locations in \(String(format: "%.1f", (clock.now - start).seconds)) s")
    }

    /// Says how far the writing has come every million changes.
    final class Progress: @unchecked Sendable {
        private let lock = NSLock()
        private var written = 0
        private let changes: Int
        init(changes: Int) { self.changes = changes }
        func count() {
            lock.lock()
            written += 1
            let report = written % 1_000_000 == 0
            let now = written
            lock.unlock()
            if report { print("   … \(now) of \(changes) changes written") }
        }
    }

    /// A GET on a fresh connection: the status and the body.
    static func get(port: Int, _ target: String) throws -> (Int, [UInt8]) {
        let fd = ServerHarness.connectLoopback(port: port)
        guard fd >= 0 else { throw ServerHarness.Failure("cannot connect to port \(port)") }
        defer { close(fd) }
        let request = Array("GET \(target)\(target.contains("?") ? "&" : "?")ns=bench-default-rtdb HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer owner\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            response.append(contentsOf: buffer[..<count])
        }
        let line = String(decoding: response.prefix(while: { $0 != 13 }), as: UTF8.self).split(separator: " ")
        guard line.count >= 2, let status = Int(line[1]) else { throw ServerHarness.Failure("no HTTP response to GET \(target)") }
        let headEnd = response.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound ?? response.count
        return (status, Array(response[headEnd...]))
    }

    /// A whole number member of a JSON body (`"scanned":12`).
    static func number(_ name: String, in body: [UInt8]) -> Int? {
        let text = String(decoding: body, as: UTF8.self)
        guard let range = text.range(of: "\"\(name)\":") else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }
}
