import Foundation
import HearthTesting
#if canImport(Glibc)
    import Glibc
#endif

/// The coordinator's side of the load generator: `hearth-bench --worker` processes, each with its share of
/// the connections on its own loopback source address, driven over their standard input and output.
final class LoadFleet {
    /// What all workers counted since the last ``stats()``.
    struct Stats {
        var delivered = 0
        var acknowledged = 0
        /// recv calls that returned data, over all connections.
        var reads = 0
        var ready = 0
        var closed = 0
        /// The oldest "newest value seen" among ready connections (CLOCK_MONOTONIC ns).
        var minLastStamp: Int64 = .max
        var deliveryLatency = LatencyHistogram()
        var acknowledgementLatency = LatencyHistogram()
    }

    private struct Worker {
        let process: Process
        let commands: FileHandle
        let output: Int32
        var buffer: [UInt8] = []
    }

    private var workers: [Worker] = []
    let connectionCount: Int

    /// Starts `workerCount` workers sharing `connections` connections made by `configure` (given the
    /// worker's share and first index, and the worker's number). Workers use source addresses
    /// 127.0.0.10, .11, …
    init(workerCount: Int, connections: Int, configure: (inout LoadWorkerOptions, Int) -> Void) throws(ServerHarness.Failure) {
        connectionCount = connections
        let executable = Self.ownExecutable()
        var first = 0
        for index in 0..<workerCount {
            var options = LoadWorkerOptions()
            options.connections = connections / workerCount + (index < connections % workerCount ? 1 : 0)
            options.first = first
            options.source = 0x7F00_000A + UInt32(index)
            configure(&options, index)
            first += options.connections
            guard options.connections > 0 else { continue }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["--worker"] + options.arguments
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            do { try process.run() } catch { throw ServerHarness.Failure("cannot start a load worker: \(error)") }
            workers.append(Worker(process: process, commands: input.fileHandleForWriting, output: output.fileHandleForReading.fileDescriptor))
        }
    }

    deinit { stop() }

    static func ownExecutable() -> String {
        var buffer = [Int8](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 { return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return CommandLine.arguments[0]
    }

    func send(_ command: String) {
        for worker in workers { worker.commands.write(Data((command + "\n").utf8)) }
    }

    /// The next line from worker `index`, waiting at most until `deadline` (CLOCK_MONOTONIC ns).
    private func line(from index: Int, deadline: Int64) -> String? {
        while true {
            if let newline = workers[index].buffer.firstIndex(of: 10) {
                let line = String(decoding: workers[index].buffer[..<newline], as: UTF8.self)
                workers[index].buffer.removeSubrange(...newline)
                return line
            }
            let remaining = (deadline - monotonicNanoseconds()) / 1_000_000
            guard remaining > 0 else { return nil }
            var watched = pollfd(fd: workers[index].output, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&watched, 1, Int32(min(remaining, 1000))) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(workers[index].output, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            workers[index].buffer += chunk[..<count]
        }
    }

    /// True when worker `index` has a whole line waiting or ready to read (does not block).
    func hasLine(from index: Int) -> Bool {
        if workers[index].buffer.contains(10) { return true }
        var watched = pollfd(fd: workers[index].output, events: Int16(POLLIN), revents: 0)
        return Glibc.poll(&watched, 1, 0) > 0
    }

    var workerCount: Int { workers.count }

    /// Waits for every worker's `ready` line; returns the connections ready, those that failed, the slowest
    /// worker's setup time in ms and the first error.
    func waitReady(seconds: Double, only indices: [Int]? = nil) throws(ServerHarness.Failure) -> (ready: Int, closed: Int, milliseconds: Int, error: String?) {
        let deadline = monotonicNanoseconds() + Int64(seconds * 1e9)
        var ready = 0, closed = 0, slowest = 0
        var firstError: String?
        for index in indices ?? Array(workers.indices) {
            guard let line = line(from: index, deadline: deadline) else {
                throw ServerHarness.Failure("load worker \(index) not ready within \(Int(seconds)) s")
            }
            let fields = line.split(separator: " ", maxSplits: 4)
            guard fields.first == "ready", fields.count == 5 else { throw ServerHarness.Failure("load worker \(index): \(line)") }
            ready += Int(fields[1]) ?? 0
            closed += Int(fields[2]) ?? 0
            slowest = max(slowest, Int(fields[3]) ?? 0)
            if fields[4] != "-", firstError == nil { firstError = String(fields[4]) }
        }
        return (ready, closed, slowest, firstError)
    }

    /// Every worker's counters since the last call, summed (and their counting starts afresh).
    func stats() throws(ServerHarness.Failure) -> Stats {
        send("stats")
        var total = Stats()
        let deadline = monotonicNanoseconds() + 30_000_000_000
        for index in workers.indices {
            guard let line = line(from: index, deadline: deadline) else { throw ServerHarness.Failure("load worker \(index) did not answer") }
            let fields = line.split(separator: " ")
            guard fields.first == "stats", fields.count == 9,
                let delivery = LatencyHistogram(encoded: fields[6]), let acknowledgement = LatencyHistogram(encoded: fields[7])
            else { throw ServerHarness.Failure("load worker \(index): \(line)") }
            total.delivered += Int(fields[1]) ?? 0
            total.acknowledged += Int(fields[2]) ?? 0
            total.reads += Int(fields[8]) ?? 0
            total.ready += Int(fields[3]) ?? 0
            total.closed += Int(fields[4]) ?? 0
            total.minLastStamp = min(total.minLastStamp, Int64(fields[5]) ?? 0)
            total.deliveryLatency.merge(delivery)
            total.acknowledgementLatency.merge(acknowledgement)
        }
        return total
    }

    func stop() {
        for worker in workers where worker.process.isRunning {
            worker.commands.write(Data("quit\n".utf8))
        }
        for worker in workers {
            for _ in 0..<500 where worker.process.isRunning { usleep(10_000) }
            if worker.process.isRunning { kill(worker.process.processIdentifier, SIGKILL) }
            worker.process.waitUntilExit()
            close(worker.output)
        }
        workers = []
    }
}

/// A `redis-server` from Debian on a free port with a temporary directory: the side-by-side peer of the
/// ws.* scenarios.
final class RedisPeer {
    let process: Process
    let port: Int
    let directory: String

    /// `durable`: append-only file with `fsync` before each reply batch (`appendfsync always`), the
    /// closest Redis comes to Hearth's durable acknowledgements.
    init(name: String, durable: Bool = false) throws(ServerHarness.Failure) {
        let binary = try ServerHarness.tool("redis-server", package: "redis-server")
        directory = ServerHarness.temporaryDirectory(name)
        port = Loopback.freePort()
        var arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--dir", directory, "--save", "",
                         "--daemonize", "no", "--maxclients", "19000", "--logfile", directory + "/redis.log",
                         "--protected-mode", "no"]
        arguments += durable ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]
        process = try ServerHarness.spawn(binary, arguments, log: directory + "/stdout.log")
        try ServerHarness.waitForListener(port: port, process: process)
    }

    func stop() {
        ServerHarness.stop(process)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
