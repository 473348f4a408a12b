#if canImport(Glibc)
    import Glibc
#endif

/// `hearth-bench --worker …`: one load-generator process. It opens its share of the connections on one
/// epoll loop, says `ready` on standard output, then answers the coordinator's commands, one a line on
/// standard input:
///
/// - `stats`: prints `stats <delivered> <acknowledged> <ready> <closed> <minLastStamp> <delivery histogram>
///   <acknowledgement histogram> <reads>` and starts counting afresh;
/// - `write <window>`: every writer connection keeps `window` writes in flight (0 stops);
/// - `reconnect <ms>`: drops every connection at once, opens them again spread evenly over `ms`
///   milliseconds, and prints `ready` again once all are listening;
/// - `quit`.
struct LoadWorkerOptions: Equatable {
    var wire = LoadProtocol.realtime
    var port = 0
    var connections = 0
    var role = "listener"
    /// The listeners' path; writers write under `<path>/<index>` (Redis: the key `<path>:<index>`).
    var path = "/fan"
    /// Index of this worker's first connection among all workers' (names writers' paths).
    var first = 0
    /// Loopback source address (host order) of this worker's connections.
    var source: UInt32 = 0x7F00_0001
    var credential: String?
    /// Connections being set up at once (a SYN flood of thousands only measures the listen backlog).
    var setupConcurrency = 256

    init() {}

    init(arguments: [String]) throws(LoadLoop.Failure) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw LoadLoop.Failure("\(argument) needs a value") }
            switch argument {
            case "--protocol":
                guard let wire = LoadProtocol(rawValue: value) else { throw LoadLoop.Failure("unknown protocol \(value)") }
                self.wire = wire
            case "--port": port = Int(value) ?? 0
            case "--connections": connections = Int(value) ?? 0
            case "--role": role = value
            case "--path": path = value
            case "--first": first = Int(value) ?? 0
            case "--source": source = UInt32(value) ?? source
            case "--credential": credential = value
            case "--setup-concurrency": setupConcurrency = max(1, Int(value) ?? setupConcurrency)
            default: throw LoadLoop.Failure("unknown worker option \(argument)")
            }
        }
        guard port > 0, connections > 0, ["listener", "writer"].contains(role) else {
            throw LoadLoop.Failure("a worker needs --port, --connections and --role listener|writer")
        }
    }

    var arguments: [String] {
        var list = ["--protocol", wire.rawValue, "--port", "\(port)", "--connections", "\(connections)", "--role", role,
                    "--path", path, "--first", "\(first)", "--source", "\(source)", "--setup-concurrency", "\(setupConcurrency)"]
        if let credential { list += ["--credential", credential] }
        return list
    }

    func path(of index: Int) -> String {
        guard role == "writer" else { return path }
        return wire == .redis ? "\(path):\(first + index)" : "\(path)/\(first + index)"
    }
}

enum LoadWorker {
    /// Runs a worker until `quit` or the end of standard input; returns the exit status.
    static func main(arguments: [String]) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        raiseOpenFileLimit()
        do {
            let options = try LoadWorkerOptions(arguments: arguments)
            try run(options)
            return 0
        } catch {
            say("error \(error)")
            return 1
        }
    }

    static func raiseOpenFileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    private static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }

    private static func run(_ options: LoadWorkerOptions) throws(LoadLoop.Failure) {
        let loop = try LoadLoop(wire: options.wire, port: options.port, credential: options.credential)
        let role: LoadConnection.Role = options.role == "writer" ? .writer : .listener
        var commands: [UInt8] = []
        var pending: [String] = []
        var finished = false
        loop.watchExternal(0)
        loop.external = { fd in
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 {
                finished = true
                return
            }
            commands += chunk[..<count]
            while let newline = commands.firstIndex(of: 10) {
                pending.append(String(decoding: commands[..<newline], as: UTF8.self))
                commands.removeSubrange(...newline)
            }
        }
        var awaitingReady = true
        /// Connections still to reconnect, latest first: (due time, connection).
        var reconnects: [(Int64, LoadConnection)] = []
        var setupStart = monotonicNanoseconds()
        while !finished {
            // Open more while fewer than `setupConcurrency` are between connect and ready.
            while loop.connections.count < options.connections,
                loop.connections.count - loop.readyCount - loop.closedCount < options.setupConcurrency
            {
                try loop.open(role: role, path: options.path(of: loop.connections.count), source: options.source)
            }
            let now = monotonicNanoseconds()
            while let (due, connection) = reconnects.last, due <= now {
                reconnects.removeLast()
                try loop.reconnect(connection, source: options.source)
            }
            loop.poll(timeout: reconnects.isEmpty ? 20 : 1)
            if awaitingReady, reconnects.isEmpty, loop.connections.count == options.connections, loop.readyCount + loop.closedCount == options.connections {
                awaitingReady = false
                let milliseconds = Double(monotonicNanoseconds() - setupStart) / 1e6
                say("ready \(loop.readyCount) \(loop.closedCount) \(Int(milliseconds)) \(loop.lastError ?? "-")")
            }
            for command in pending {
                let words = command.split(separator: " ")
                switch words.first {
                case "stats":
                    let counters = loop.takeCounters()
                    let minLast = loop.connections.filter { $0.phase == .ready }.map(\.lastStamp).min() ?? 0
                    say("stats \(counters.delivered) \(counters.acknowledged) \(loop.readyCount) \(loop.closedCount) \(minLast) \(counters.deliveryLatency.encoded) \(counters.acknowledgementLatency.encoded) \(counters.reads)")
                case "write":
                    loop.startWriting(window: words.count > 1 ? Int(words[1]) ?? 0 : 0)
                case "reconnect":
                    // Every connection drops now and comes back at its own moment within the spread.
                    setupStart = monotonicNanoseconds()
                    let spread = words.count > 1 ? Int64(words[1]) ?? 0 : 0
                    loop.dropAll()
                    reconnects = loop.connections.enumerated().map { index, connection in
                        (setupStart + spread * 1_000_000 * Int64(index) / Int64(max(1, loop.connections.count)), connection)
                    }
                    reconnects.reverse()
                    awaitingReady = true
                case "quit":
                    finished = true
                default:
                    say("error unknown command \(command)")
                }
            }
            pending.removeAll()
        }
    }
}
