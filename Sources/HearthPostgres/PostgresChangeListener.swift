import Foundation
import HearthStorage
import HearthSupport
import Synchronization

/// Wakes the engines of one PostgreSQL database when another server commits: one connection that
/// LISTENs on `hearth_changes` (every commit notifies it, `PostgresSchema.notifyChange`) and a thread
/// that asks the engine of the notified namespace to catch up. Shared by every following engine of a
/// process that uses the same database (``shared(for:log:)``).
///
/// The notification only wakes; the change log is the truth. So a notification lost (the listening
/// connection broke, PostgreSQL restarted) costs only time: after every reconnect, and every
/// `sweepInterval` anyway, every engine catches up.
final class PostgresChangeListener: Sendable {
    /// How often every followed namespace catches up even without a notification.
    static let sweepInterval: Duration = .seconds(2)
    /// How long a failed connect waits before the next.
    static let reconnectDelay: TimeInterval = 0.5

    private struct Follower {
        weak var engine: PostgresStorageEngine?
    }

    let endpoint: PostgresEndpoint
    private let log: Log
    /// Engines by namespace; several engines of one namespace (tests run two "servers" in one process).
    private let followers = Mutex<[String: [Follower]]>([:])
    private let stopped = Atomic<Bool>(false)
    /// Told of every rules deploy (`PostgresRulesStore.observe`), by channel; and of every namespace
    /// deleted (`PostgresNamespaceCatalogue.observeDeletions`).
    private let observers = Mutex<[String: [@Sendable (String) -> Void]]>([:])

    func observeRules(_ changed: @escaping @Sendable (String) -> Void) {
        observers.withLock { $0[PostgresSchema.rulesChannel, default: []].append(changed) }
    }

    func observeDeletions(_ deleted: @escaping @Sendable (String) -> Void) {
        observers.withLock { $0[PostgresSchema.namespacesChannel, default: []].append(deleted) }
    }

    private static let listeners = Mutex<[String: PostgresChangeListener]>([:])
    /// Ends a wait for notifications at once when stopping.
    private let wake = WakeSignal()
    /// Signalled by the thread when it has closed its connection and ended.
    private let finished = DispatchSemaphore(value: 0)

    /// Stops every listener of the process and waits for their threads to end (`hearth serve`, once
    /// its server and engines have closed): nothing of them may run while the process exits. A listener
    /// asked for again afterwards starts afresh.
    static func stopAll() {
        let stopping = listeners.withLock { listeners in
            defer { listeners.removeAll() }
            return Array(listeners.values)
        }
        for listener in stopping {
            listener.stopped.store(true, ordering: .relaxed)
            listener.wake.signal()
        }
        for listener in stopping { listener.finished.wait() }
    }

    /// The listener for `endpoint`'s database, started on first use and kept for the process.
    static func shared(for endpoint: PostgresEndpoint, log: Log) -> PostgresChangeListener {
        listeners.withLock { listeners in
            if let listener = listeners[endpoint.url] { return listener }
            let listener = PostgresChangeListener(endpoint: endpoint, log: log)
            listeners[endpoint.url] = listener
            listener.start()
            return listener
        }
    }

    private init(endpoint: PostgresEndpoint, log: Log) {
        self.endpoint = endpoint
        self.log = log
    }

    func add(_ engine: PostgresStorageEngine) {
        followers.withLock { followers in
            followers[engine.namespace, default: []].removeAll { $0.engine == nil }
            followers[engine.namespace, default: []].append(Follower(engine: engine))
        }
    }

    private func engines(_ namespace: String?) -> [PostgresStorageEngine] {
        followers.withLock { followers in
            if let namespace { return (followers[namespace] ?? []).compactMap(\.engine) }
            return followers.values.flatMap { $0.compactMap(\.engine) }
        }
    }

    private func start() {
        NamedThread.start("hearth.postgres.listen") { [self] in
            run()
            finished.signal()
        }
    }

    private func run() {
        var reported = false
        while !stopped.load(ordering: .relaxed) {
            let connection: PostgresConnection
            do {
                connection = try PostgresConnection(endpoint, deadline: .now + PostgresTimeouts.connect)
                _ = try connection.run(
                    [PostgresSchema.changesChannel, PostgresSchema.rulesChannel, PostgresSchema.namespacesChannel].map {
                        PostgresStatement("LISTEN \($0)")
                    },
                    deadline: .at(.now + PostgresTimeouts.commit))
            } catch {
                if !reported {
                    log("hearth: cannot listen for other servers' commits at \(endpoint) (\(error)); retrying. Changes from them arrive within \(Self.sweepInterval) meanwhile.")
                    reported = true
                }
                sweepAll()
                pause(Self.reconnectDelay)
                continue
            }
            if reported { log("hearth: listening for other servers' commits at \(endpoint) again.") }
            reported = false
            // Whatever was committed while nobody listened.
            sweepAll()
            listen(on: connection)
            connection.close()
        }
    }

    /// Reads notifications until the connection breaks: each wakes its namespace's engines (unless they
    /// are there already); every `sweepInterval` all of them catch up.
    private func listen(on connection: PostgresConnection) {
        var nextSweep = ContinuousClock.now + Self.sweepInterval
        while !stopped.load(ordering: .relaxed) {
            let received: [(channel: String, payload: String)]
            do {
                received = try connection.notifications(waitingUntil: nextSweep, orUntil: wake)
            } catch {
                log("hearth: the connection listening for other servers' commits at \(endpoint) broke (\(error)); reconnecting.")
                return
            }
            let observers = observers.withLock { $0 }
            for notification in received where notification.channel != PostgresSchema.changesChannel {
                for observer in observers[notification.channel] ?? [] { observer(notification.payload) }
            }
            var woken = Set<String>()
            for notification in received where notification.channel == PostgresSchema.changesChannel {
                guard let space = notification.payload.firstIndex(of: " "),
                    let sequence = Int64(notification.payload[..<space])
                else { continue }
                let namespace = String(notification.payload[notification.payload.index(after: space)...])
                guard !woken.contains(namespace) else { continue }
                for engine in engines(namespace) where engine.isBehind(sequence) {
                    woken.insert(namespace)
                    engine.catchUp()
                }
            }
            if ContinuousClock.now >= nextSweep {
                sweepAll()
                nextSweep = .now + Self.sweepInterval
            }
        }
    }

    private func sweepAll() {
        for engine in engines(nil) { engine.catchUp() }
    }

    /// Sleeps `seconds`, or less once stopped.
    private func pause(_ seconds: TimeInterval) {
        let end = Date(timeIntervalSinceNow: seconds)
        while !stopped.load(ordering: .relaxed) && Date() < end { Thread.sleep(forTimeInterval: 0.05) }
    }
}

/// The threads HearthPostgres runs beside the engines for a process (the listener that wakes following
/// engines, shared by all of them).
public enum PostgresBackgroundThreads {
    /// Stops them and waits for them to end; call once the server and its engines have closed, before
    /// the process exits.
    public static func stop() { PostgresChangeListener.stopAll() }
}
