import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server of a test's own: a fresh cluster (`initdb`) in a temporary directory, listening
/// on a free loopback port and on a Unix socket in that directory, stopped and removed when the test
/// process ends (a watcher process sees to it even after a crash) or when ``destroy()`` is called.
///
///     let postgres = try await TemporaryPostgres.shared()  // one per test process, for most tests
///     let engine = try PostgresStorageEngine(url: postgres.url, namespace: "t1")
///     let own = try await TemporaryPostgres.make()          // one to stop and restart
///     try await offThePool { try own.restart() }
///
/// It uses Debian's server programs (`/usr/lib/postgresql/<version>/bin`, package `postgresql`).
/// `initdb` refuses to run as root, so as root (CI) every server program runs as `nobody`, which owns the
/// directory. Tests that need PostgreSQL skip when `HEARTH_SKIP_POSTGRES=1` (``isSkipped``); otherwise
/// missing programs fail them with a message naming the packages.
public final class TemporaryPostgres: @unchecked Sendable {
    /// The cluster, the socket, the server's log.
    public let directory: String
    public private(set) var port: Int
    public let user = "hearth"
    public let password: String
    public let database = "postgres"
    private let programs: String
    /// Serialises start, stop and destroy.
    private let lock = NSLock()
    private var running = false
    private var destroyed = false

    /// `postgresql://hearth:PASSWORD@127.0.0.1:PORT/postgres`: TCP on loopback, with a password.
    public var url: String { "postgresql://\(user):\(password)@127.0.0.1:\(port)/\(database)" }

    /// The same server through its Unix socket (trusted, as only the directory's owner can reach it).
    public var socketURL: String { "postgresql://\(user)@/\(database)?host=\(directory)&port=\(port)" }

    /// True when `HEARTH_SKIP_POSTGRES=1`: tests that need PostgreSQL are skipped rather than failed.
    public static var isSkipped: Bool { ProcessInfo.processInfo.environment["HEARTH_SKIP_POSTGRES"] == "1" }

    /// Why PostgreSQL tests cannot run here.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    private static let sharedServer = Mutex<Task<TemporaryPostgres, any Error>?>(nil)

    /// One server for the whole test process, started on first use. Tests on it use namespaces of their
    /// own; tests that stop or restart a server make their own (``make()``).
    ///
    /// The first caller starts it on a thread of its own (``offThePool(_:)``) and the others wait for
    /// that start suspended, so a slow `initdb` never holds the test process's cooperative threads.
    public static func shared() async throws -> TemporaryPostgres {
        let start = sharedServer.withLock { task in
            if let task { return task }
            let started = Task { try await make() }
            task = started
            return started
        }
        return try await start.value
    }

    /// A server of the caller's own, made and started off the cooperative pool.
    public static func make() async throws -> TemporaryPostgres {
        try await offThePool {
            do { return try TemporaryPostgres() } catch let error as Unavailable { throw error } catch {
                throw Unavailable(description: "\(error)")
            }
        }
    }

    /// Makes a cluster and starts it.
    ///
    /// - Throws: ``Unavailable`` naming the Debian packages when the server programs are missing, or
    ///   with the programs' output when they fail.
    public init() throws {
        guard let programs = Self.findPrograms() else {
            throw Unavailable(description: """
                PostgreSQL's server programs (initdb, pg_ctl, postgres) are not installed: looked in \
                /usr/lib/postgresql/*/bin. Install the Debian packages postgresql and libpq-dev (scripts/setup \
                does), or set HEARTH_SKIP_POSTGRES=1 to skip the PostgreSQL tests.
                """)
        }
        self.programs = programs
        var template = Array((NSTemporaryDirectory() + "pg-hearth-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Unavailable(description: "cannot create a temporary directory: \(String(cString: strerror(errno)))") }
        directory = String(cString: made)
        password = (0..<16).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
        port = Loopback.freePort()
        do {
            try Self.giveToServerUser(directory)
            let passwordFile = directory + "/password"
            try password.write(toFile: passwordFile, atomically: false, encoding: .utf8)
            try Self.giveToServerUser(passwordFile)
            try run(
                "initdb", ["-D", directory + "/data", "-U", user, "--pwfile=" + passwordFile, "--auth-local=trust",
                "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"])
            unlink(passwordFile)
            try start()
        } catch {
            destroy()
            throw error
        }
        watchForExit()
    }

    deinit { destroy() }

    /// Starts the server (again) on its port; waits until it accepts connections.
    public func start() throws {
        lock.lock()
        defer { lock.unlock() }
        guard !running, !destroyed else { return }
        var attempt = 1
        while true {
            do {
                try run(
                    "pg_ctl",
                    ["-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "60", "start", "-o",
                     "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c unix_socket_permissions=0700 -c shared_buffers=16MB -c max_connections=100"])
                running = true
                return
            } catch {
                // Another process may have taken the port since it was free: try another one.
                guard attempt < 5, portWasTaken() else { throw error }
                attempt += 1
                port = Loopback.freePort()
            }
        }
    }

    /// Whether the last start failed because its port was in use (the server log says so), or something
    /// listens there now.
    private func portWasTaken() -> Bool {
        let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
        return log.contains("could not bind") || log.contains("Address already in use") || Loopback.canConnect(port)
    }

    /// Stops the server (`pg_ctl stop -m fast`: connections are closed, nothing is lost).
    public func stop() throws {
        lock.lock()
        defer { lock.unlock() }
        guard running else { return }
        try run("pg_ctl", ["-D", directory + "/data", "-w", "-t", "60", "stop", "-m", "fast"])
        running = false
    }

    /// Stops and starts the server on the same port.
    public func restart() throws {
        try stop()
        try start()
    }

    /// Stops the server at once and removes its directory.
    public func destroy() {
        lock.lock()
        defer { lock.unlock() }
        guard !destroyed else { return }
        destroyed = true
        if running { try? run("pg_ctl", ["-D", directory + "/data", "-w", "stop", "-m", "immediate"]) }
        running = false
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Processes

    /// `/usr/lib/postgresql/<newest version>/bin`, when it has initdb.
    private static func findPrograms() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        let sorted = versions.compactMap { name in Int(name).map { ($0, name) } }.sorted { $0.0 > $1.0 }
        for (_, name) in sorted where access("\(root)/\(name)/bin/initdb", X_OK) == 0 {
            return "\(root)/\(name)/bin"
        }
        return nil
    }

    private static var isRoot: Bool { geteuid() == 0 }

    /// The account the server runs as when we are root: `initdb` refuses root ("cannot be run as root").
    private static let serverUser = "nobody"

    private static func giveToServerUser(_ path: String) throws {
        guard isRoot else { return }
        guard let account = getpwnam(serverUser) else { throw Unavailable(description: "there is no user '\(serverUser)' to run PostgreSQL as (initdb refuses root)") }
        guard chown(path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
            throw Unavailable(description: "cannot give \(path) to \(serverUser): \(String(cString: strerror(errno)))")
        }
    }

    /// The command line that runs a server program, as `nobody` when we are root.
    private func commandLine(_ program: String, _ arguments: [String]) -> [String] {
        let command = [programs + "/" + program] + arguments
        return Self.isRoot ? ["/usr/sbin/runuser", "-u", Self.serverUser, "--"] + command : command
    }

    /// Runs a server program to its end; throws with its output when it fails.
    ///
    /// posix_spawn and waitpid rather than Foundation's `Process`: the server that `pg_ctl start` leaves
    /// running inherits the descriptors Process watches for its child's end, so Process would never see
    /// `pg_ctl` end. The output goes to a file for the same reason (a pipe would never reach its end).
    private func run(_ program: String, _ arguments: [String]) throws {
        let line = commandLine(program, arguments)
        let outputPath = directory + "/\(program).out"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // In the directory (the caller's may be closed to `nobody`), through a shell: Glibc's Swift module
        // lacks posix_spawn_file_actions_addchdir_np.
        let shell = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory] + line
        let arguments = shell.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var child = pid_t()
        let spawned = posix_spawn(&child, shell[0], &actions, nil, arguments, environ)
        guard spawned == 0 else { throw Unavailable(description: "cannot run \(line[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 {
            guard errno == EINTR else { throw Unavailable(description: "waiting for \(program): \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED and WEXITSTATUS are macros: exited normally when the low 7 bits are 0.
        let exitCode = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
        guard exitCode == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)).map { "\nserver.log:\n" + $0.suffix(2000) } ?? ""
            throw Unavailable(description: "\(program) failed (exit status \(status)): \(text)\(log)")
        }
    }

    /// A shell that outlives nothing but this process: when it ends (even killed), the server is stopped
    /// and the directory removed, so no test run leaves a postgres behind.
    private func watchForExit() {
        let stop = commandLine("pg_ctl", ["-D", directory + "/data", "stop", "-m", "immediate"]).map { "'\($0)'" }.joined(separator: " ")
        let script = "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(stop) >/dev/null 2>&1; rm -rf '\(directory)'"
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: "/bin/sh")
        watcher.arguments = ["-c", script]
        watcher.standardInput = FileHandle.nullDevice
        watcher.standardOutput = FileHandle.nullDevice
        watcher.standardError = FileHandle.nullDevice
        try? watcher.run()
    }
}
