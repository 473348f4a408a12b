import Foundation
import HearthTesting
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Synchronization
import Testing

@testable import HearthClient

#if canImport(Glibc)
    import Glibc
#endif

/// A real `hearth serve --emulator` on a free port with a temporary data directory, for one test (or a
/// suite); stopped by ``stop()`` (SIGTERM, then SIGKILL after 10 s).
final class TestServer: @unchecked Sendable {
    private(set) var port: Int
    let dataDirectory: String
    private(set) var process: Process
    private var arguments: [String]

    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["HEARTH_BINARY"] { return path }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/hearth").path
    }

    init(emulator: Bool = true, extraArguments: [String] = []) throws {
        port = Loopback.freePort()
        dataDirectory = NSTemporaryDirectory() + "hearth-client-test-\(UUID().uuidString)"
        let settings = ["--data", dataDirectory, "--project", "demo-client"] + (emulator ? ["--emulator"] : []) + extraArguments
        arguments = ["serve", "--port", String(port)] + settings
        process = Process()
        // The port was free when chosen; another test's server or client may take it before this one
        // binds it (it then exits at once): start again on another, as often as five times.
        for attempt in 1...5 {
            do {
                try launch()
                return
            } catch let failure as ServerFailed where failure.exited && attempt < 5 {
                port = Loopback.freePort()
                arguments = ["serve", "--port", String(port)] + settings
            }
        }
    }

    private func launch() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try waitUntilListening()
    }

    private func waitUntilListening() throws {
        for _ in 0..<400 {
            if Loopback.canConnect(port) { return }
            guard process.isRunning else { throw ServerFailed(message: "hearth serve exited with \(process.terminationStatus)", exited: true) }
            usleep(25_000)
        }
        throw ServerFailed(message: "hearth serve did not listen on \(port) within 10 s")
    }

    struct ServerFailed: Error, CustomStringConvertible {
        let message: String
        /// The process ended before it listened (rather than not listening in time).
        var exited = false
        var description: String { message }
    }

    var url: String { "http://127.0.0.1:\(port)" }

    func databaseURL(_ namespace: String) -> String { "http://127.0.0.1:\(port)?ns=\(namespace)" }

    /// Kills the server at once (SIGKILL): nothing is answered, sockets are reset.
    func kill() {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Starts it again on the same port and data.
    func restart() throws {
        kill()
        try launch()
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        for _ in 0..<400 where process.isRunning { usleep(25_000) }
        kill()
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    deinit { stop() }

    /// A REST request as another client would make it (`Authorization: Bearer owner` is admin).
    func rest(_ method: String, _ path: String, namespace: String, body: String? = nil, admin: Bool = true) throws -> (Int, String) {
        let location = path.isEmpty ? "/" : path
        return try http(method, "\(location).json?ns=\(namespace)", body: body, admin: admin)
    }

    /// Any HTTP request to the server: `target` is the path and query (`/emulator/v1/projects/…`).
    func http(_ method: String, _ target: String, body: String? = nil, admin: Bool = true) throws -> (Int, String) {
        var request = URLRequest(url: try #require(URL(string: url + target)))
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if admin { request.setValue("Bearer owner", forHTTPHeaderField: "Authorization") }
        let result = Mutex<(Int, String)?>(nil)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, _ in
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            result.withLock { $0 = (status, String(decoding: data ?? Data(), as: UTF8.self)) }
            done.signal()
        }.resume()
        _ = done.wait(timeout: .now() + 10)
        return try #require(result.withLock { $0 })
    }
}

/// A database for a test: its own app (so two of them are two clients), callbacks on a private queue.
func makeDatabase(_ server: TestServer, namespace: String, app name: String = UUID().uuidString, secure: Bool = false) -> Database {
    let options = FirebaseOptions(googleAppID: "1:1:test", gcmSenderID: "1")
    options.databaseURL = secure ? "https://127.0.0.1:\(server.port)?ns=\(namespace)" : server.databaseURL(namespace)
    FirebaseApp.configure(name: name, options: options)
    let database = Database.database(app: FirebaseApp.app(name: name)!)
    database.callbackQueue = DispatchQueue(label: "test.callbacks.\(name)")
    return database
}

/// An auth for a test: an app of its own on `server` (project API key `apiKey`), the signed-in user kept in
/// `store`, callbacks on a private queue.
func makeAuth(
    _ server: TestServer, namespace: String, apiKey: String = "test-key", store: (any AuthUserStore)? = NoAuthUserStore(),
    app name: String = UUID().uuidString
) -> Auth {
    let options = FirebaseOptions(googleAppID: "1:1:test", gcmSenderID: "1")
    options.databaseURL = server.databaseURL(namespace)
    options.apiKey = apiKey
    FirebaseApp.configure(name: name, options: options)
    let auth = Auth.auth(app: FirebaseApp.app(name: name)!, store: store)
    auth.callbackQueue = DispatchQueue(label: "test.auth.\(name)")
    return auth
}

/// Collects what listeners deliver, across threads, and waits for conditions on it.
final class Recorder<Value: Sendable>: Sendable {
    private let items = Mutex<[Value]>([])
    func append(_ item: Value) { items.withLock { $0.append(item) } }
    var all: [Value] { items.withLock { $0 } }
    var last: Value? { all.last }

    /// Waits up to `seconds` for `condition`; true when it held.
    /// Generous by default, as the bound is for "never": `swift test` runs every suite at once and keeps
    /// both cores of a CI host busy for the whole minute it takes, so a step that takes 50 ms alone was
    /// measured taking 30 s there (the tests that block for seconds already run off the cooperative
    /// threads: see HearthTesting's offThePool).
    @discardableResult
    func wait(seconds: Double = 120, _ condition: ([Value]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(all) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition(all)
    }
}

/// A snapshot as a comparable record.
struct Seen: Sendable, Equatable, CustomStringConvertible {
    var type: String
    var key: String
    var json: String
    var previous: String?
    var description: String { "\(type) \(key) \(json)\(previous.map { " after \($0)" } ?? "")" }
}

func json(_ snapshot: DataSnapshot) -> String { snapshot.node.json(.rest) }
