import Foundation
import HearthSupport
import Synchronization

/// What a ``PostgresListener`` hears.
public enum PostgresNotification: Sendable, Equatable {
    /// Listening, for the first time or again after a break: notifications sent before this may have
    /// been missed, so whatever they would have told must be read again.
    case listening
    /// One notification's payload.
    case payload(String)
    /// The connection broke: until the next `.listening`, notifications are missed.
    case interrupted
}

/// A connection of its own that LISTENs on one channel, and the thread that reads it: tells `handler`
/// every notification, and when it stops and starts listening, so that a cache kept fresh by
/// notifications knows when it cannot trust itself. Made by ``PostgresDatabase/listen(to:_:)``.
///
///     let listener = database.listen(to: "hearth_auth_users") { event in … }
///     listener.stop()
///
/// A connection that breaks is replaced (every `reconnectDelay`); one that goes silent is found out by a
/// `SELECT 1` every `pingInterval`, bounded like every other wait (`PostgresTimeouts`).
public final class PostgresListener: Sendable {
    /// How often an idle listening connection is checked with a round trip: a network that drops
    /// packets breaks no socket, so without it a listener would wait for notifications that cannot come.
    static let pingInterval: Duration = .seconds(5)
    static let reconnectDelay: Duration = .milliseconds(500)

    private let state: State

    /// What the thread shares with the listener, so that the thread does not keep the listener alive.
    private final class State: Sendable {
        let stopped = Atomic<Bool>(false)
        /// Ends a wait for notifications at once when stopping.
        let wake = WakeSignal()
        /// Signalled once the thread has closed its connection and will touch nothing more.
        let finished = DispatchSemaphore(value: 0)
        /// The thread's identity, so that `stop()` from a handler does not wait for itself.
        let thread = Mutex<ThreadIdentity?>(nil)
    }

    init(endpoint: PostgresEndpoint, channel: String, log: Log, handler: @escaping @Sendable (PostgresNotification) -> Void) {
        // LISTEN takes an identifier, not a parameter: only plain names are accepted (ours are constants).
        precondition(
            !channel.isEmpty && channel.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) },
            "a channel name of lower-case letters, digits and underscores")
        let state = State()
        self.state = state
        NamedThread.start("hearth.postgres.listen") {
            state.thread.withLock { $0 = .current }
            defer { state.finished.signal() }
            Self.run(endpoint: endpoint, channel: channel, log: log, state: state, handler: handler)
        }
    }

    deinit { stop() }

    /// Stops listening and waits for the thread to close its connection and end (at once, or within a
    /// connect's deadline while it connects), so that nothing of it runs while the process
    /// exits (libpq's TLS in a thread while OpenSSL's exit handlers free its locks crashed `hearth users`).
    /// From the listener's own thread (a handler) it only asks.
    public func stop() {
        state.stopped.store(true, ordering: .relaxed)
        state.wake.signal()
        guard state.thread.withLock({ $0 }) != .current else { return }
        state.finished.wait()
        state.finished.signal()  // for a later stop() waiting too
    }

    private static func run(
        endpoint: PostgresEndpoint, channel: String, log: Log, state: State, handler: @Sendable (PostgresNotification) -> Void
    ) {
        var reported = false
        while !state.stopped.load(ordering: .relaxed) {
            let connection: PostgresConnection
            do {
                connection = try PostgresConnection(endpoint, deadline: .now + PostgresTimeouts.connect)
                _ = try connection.run([PostgresStatement("LISTEN \(channel)")], deadline: .at(.now + PostgresTimeouts.query))
            } catch {
                if !reported {
                    log("hearth: cannot listen on '\(channel)' at \(endpoint) (\(error)); retrying every \(reconnectDelay).")
                    reported = true
                }
                pause(reconnectDelay, unless: state)
                continue
            }
            if reported { log("hearth: listening on '\(channel)' at \(endpoint) again.") }
            reported = false
            handler(.listening)
            do {
                try listen(on: connection, channel: channel, state: state, handler: handler)
            } catch {
                log("hearth: the connection listening on '\(channel)' at \(endpoint) broke (\(error)); reconnecting.")
                reported = true
                handler(.interrupted)
            }
            connection.close()
        }
    }

    /// Hands over notifications until `stop()` or until the connection breaks (thrown).
    private static func listen(
        on connection: PostgresConnection, channel: String, state: State, handler: @Sendable (PostgresNotification) -> Void
    ) throws(PostgresError) {
        var nextPing = ContinuousClock.now + pingInterval
        while !state.stopped.load(ordering: .relaxed) {
            let received = try connection.notifications(waitingUntil: nextPing, orUntil: state.wake)
            for notification in received where notification.channel == channel {
                handler(.payload(notification.payload))
            }
            if ContinuousClock.now >= nextPing {
                // Notifications that arrive meanwhile wait in libpq for the next `notifications` call.
                _ = try connection.run([PostgresStatement("SELECT 1")], deadline: .at(.now + PostgresTimeouts.query))
                nextPing = .now + pingInterval
            }
        }
    }

    private static func pause(_ duration: Duration, unless state: State) {
        let end = ContinuousClock.now + duration
        while !state.stopped.load(ordering: .relaxed) && ContinuousClock.now < end {
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
