import CEpoll  // SOCK_STREAM and IPPROTO_TCP (through <sys/socket.h>, <netinet/tcp.h>)
import Foundation
import HearthTesting
#if canImport(Glibc)
    import Glibc
#endif

/// Processes and sockets for the scenarios that measure `hearth serve` from outside: the real binary, nginx
/// as a reference and wrk as the load generator, all on loopback.
enum ServerHarness {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The `hearth` executable built next to this `hearth-bench` (`make bench` builds both).
    static func hearthBinary() throws(Failure) -> String {
        if let path = ProcessInfo.processInfo.environment["HEARTH_BINARY"] { return path }
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let candidate = me.deletingLastPathComponent().appendingPathComponent("hearth").path
        guard FileManager.default.isExecutableFile(atPath: candidate) else {
            throw Failure("no hearth binary at \(candidate): build it with 'swift build -c release --product hearth' (make bench does), or set HEARTH_BINARY")
        }
        return candidate
    }

    /// The path of `command` on PATH (and the sbin directories, where Debian puts nginx), or a clear failure
    /// naming the Debian package that provides it (scripts/setup installs both).
    static func tool(_ command: String, package: String) throws(Failure) -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(command)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Failure("'\(command)' is not installed: run scripts/setup (or 'apt-get install \(package)') and try again")
    }

    /// A socket listening on a free loopback port, for a scenario's own server side (`what` names it in
    /// the error).
    static func listenLoopback(backlog: Int32, for what: String) throws(Failure) -> (fd: Int32, port: Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let port = Loopback.freePort()
        var address = Loopback.address(port: port, host: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, backlog) == 0 else {
            close(listener)
            throw Failure("\(what): cannot listen on a loopback port")
        }
        return (listener, port)
    }

    /// A blocking TCP connection to 127.0.0.1:`port`, or -1.
    static func connectLoopback(port: Int, source: UInt32? = nil) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        if let source {
            var local = Loopback.address(port: 0, host: source)
            _ = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        var address = Loopback.address(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 {
            close(fd)
            return -1
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// Waits until something accepts connections on `port`.
    static func waitForListener(port: Int, process: Process, seconds: Double = 30) throws(Failure) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let fd = connectLoopback(port: port)
            if fd >= 0 {
                close(fd)
                return
            }
            if !process.isRunning { throw Failure("\(process.executableURL?.lastPathComponent ?? "process") exited with status \(process.terminationStatus) before listening on \(port)") }
            usleep(20_000)
        }
        throw Failure("nothing listened on port \(port) within \(Int(seconds)) s")
    }

    /// Starts `executable` with `arguments`, its output appended to `log`.
    static func spawn(_ executable: String, _ arguments: [String], log: String) throws(Failure) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = FileHandle(forWritingAtPath: log)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw Failure("cannot start \(executable): \(error)") }
        return process
    }

    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        // A server far behind (sse.fanout past its limits) may take long to finish; give it 10 s.
        for _ in 0..<1000 where process.isRunning { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// A fresh temporary directory under $HEARTH_BENCH_DIR (or /tmp/hearth-bench).
    static func temporaryDirectory(_ name: String) -> String {
        let path = StorageWorkload.directory + "/\(name)-\(getpid())"
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o755)
        return path
    }

    /// Runs `hearth serve --emulator` on a free port with a fresh data directory, and `arguments` (a
    /// cluster node's `--storage` and `--node`): HEARTH_BINARY's build, or `binary`.
    static func startHearth(
        name: String, arguments: [String] = [], binary other: String? = nil
    ) throws(Failure) -> (process: Process, port: Int, directory: String) {
        let binary: String
        if let other { binary = other } else { binary = try hearthBinary() }
        let directory = temporaryDirectory(name)
        let port = Loopback.freePort()
        let process = try spawn(
            binary, ["serve", "--emulator", "--host", "127.0.0.1", "--port", "\(port)", "--data", directory + "/data", "--project", "bench"] + arguments,
            log: directory + "/hearth.log")
        try waitForListener(port: port, process: process)
        return (process, port, directory)
    }

    /// One HTTP/1.1 request on a fresh connection; returns the status line's code.
    @discardableResult
    static func request(
        port: Int, _ method: String, _ target: String, body: String = "", credential: String? = nil
    ) throws(Failure) -> Int {
        let fd = connectLoopback(port: port)
        guard fd >= 0 else { throw Failure("cannot connect to port \(port)") }
        defer { close(fd) }
        let authorization = credential.map { "Authorization: Bearer \($0)\r\n" } ?? ""
        let text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(authorization)Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            response.append(contentsOf: buffer[..<count])
        }
        let line = String(decoding: response.prefix(while: { $0 != 13 }), as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure("no HTTP response to \(method) \(target): '\(line)'") }
        return status
    }

    /// What wrk measured: requests per second and latency percentiles in milliseconds.
    struct WrkResult {
        var requestsPerSecond: Double
        var p50: Double
        var p99: Double
        var errors: String?
    }

    /// Runs wrk against `url` and parses its summary.
    static func wrk(url: String, connections: Int, threads: Int, seconds: Int, script: String? = nil) throws(Failure) -> WrkResult {
        let binary = try tool("wrk", package: "wrk")
        var arguments = ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency"]
        if let script { arguments += ["-s", script] }
        arguments.append(url)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { throw Failure("cannot run wrk: \(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        func milliseconds(_ text: Substring) -> Double? {
            for (suffix, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where text.hasSuffix(suffix) {
                return Double(text.dropLast(suffix.count)).map { $0 * scale }
            }
            return nil
        }
        var result = WrkResult(requestsPerSecond: 0, p50: 0, p99: 0)
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.first == "Requests/sec:", fields.count == 2 { result.requestsPerSecond = Double(fields[1]) ?? 0 }
            if fields.first == "50%", fields.count == 2 { result.p50 = milliseconds(fields[1]) ?? 0 }
            if fields.first == "99%", fields.count == 2 { result.p99 = milliseconds(fields[1]) ?? 0 }
            if line.contains("Non-2xx") || line.contains("Socket errors") { result.errors = String(line).trimmingCharacters(in: .whitespaces) }
        }
        guard process.terminationStatus == 0, result.requestsPerSecond > 0 else {
            throw Failure("wrk failed (status \(process.terminationStatus)):\n\(output)")
        }
        return result
    }
}
