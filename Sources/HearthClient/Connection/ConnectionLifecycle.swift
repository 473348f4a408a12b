/// The client connection's life, decided as a value (ARCHITECTURE.md, "Decide in values"): when to ask
/// for the auth token, open a socket, send the auth, tell the repo it is ready, and when to try again.
/// ``PersistentConnection`` feeds it what happens and does what it returns; it does no I/O and reads no
/// clock (`now` comes in, in seconds), so its tests run without a server or time passing.
///
///     disconnected ──open──▶ gettingToken ──token──▶ connecting ──handshake──▶ authenticating ──ok──▶ connected
///          ▲                                            │ closed                    │ refused / closed   │ closed
///          └───────────── scheduleReconnect (backoff) ◀─┴───────────────────────────┴───────────────────┘
///
/// As Firebase's SDKs do, the token is fetched before the socket opens, so the auth is the first request
/// of every connection and the listens and writes restored after it run under it; a connection without a
/// signed-in user goes from the handshake straight to `connected`.
struct ConnectionLifecycle {
    enum Phase: Equatable {
        /// No socket. A reconnect may be scheduled (``reconnectScheduled``), or the connection is
        /// interrupted (``interruptions``).
        case disconnected
        /// Waiting for the app's token provider for `attempt`.
        case gettingToken(attempt: Int)
        /// The socket of `attempt` is opening; the handshake is awaited.
        case connecting(attempt: Int, token: String?)
        /// The handshake came; the auth was sent and its answer is awaited (requests already flow).
        case authenticating(attempt: Int)
        case connected(attempt: Int)
    }

    /// What the shell does, in order.
    enum Action: Equatable {
        /// Ask the token provider (refreshing first when `forceRefresh`); answer with
        /// ``tokenArrived(_:attempt:now:)``.
        case requestToken(forceRefresh: Bool, attempt: Int)
        /// Open a socket for `attempt`; report with ``handshake(serverTime:attempt:now:)`` and
        /// ``transportClosed(attempt:now:)``.
        case openTransport(attempt: Int)
        case closeTransport
        case scheduleReconnect(afterSeconds: Double)
        case cancelReconnect
        /// Send `auth` with this token (its answer goes to ``authAnswered(ok:attempt:now:)``), or `unauth`.
        case sendAuth(String, attempt: Int)
        case sendUnauth
        /// The SDK's `s` stats request, once per client.
        case sendStats
        /// Send every listen, unacknowledged write and queued onDisconnect operation again.
        case restoreState
        /// The repo may use the connection; the server's clock was `serverTime` (ms) at the handshake.
        case ready(serverTime: Int64)
        /// The socket of a connection is gone: answer what it can no longer answer; `wasReady` says
        /// whether the repo had been told it was ready (then it is told the connection was lost).
        case connectionEnded(wasReady: Bool)
        case startKeepalive
        case stopKeepalive
        /// The frame `0` (§1.7).
        case sendKeepalive
    }

    private(set) var phase = Phase.disconnected
    /// Why the connection must stay closed (`offline`, `server-shutdown`); empty when it may connect.
    private(set) var interruptions: Set<String> = []
    private(set) var reconnectScheduled = false
    /// Connection attempts that ended without ever becoming ready.
    private(set) var attemptsThatFailed = 0
    /// Whether the app has a token provider (an `Auth`): without one no token is asked for.
    var hasTokenProvider = false
    var backoff: ReconnectBackoff
    private var attempt = 0
    private var forceTokenRefresh = false
    private var sentStats = false
    private var readyAt: Double?
    private var lastSentAt = 0.0
    /// A number in 0..<1 for each reconnect's wait (tests pass their own).
    private let random: () -> Double

    /// The SDKs send the frame `0` after 45 s without traffic (§1.7).
    static let keepaliveSeconds = 45.0

    init(backoff: ReconnectBackoff = ReconnectBackoff(), random: @escaping () -> Double = { Double.random(in: 0..<1) }) {
        self.backoff = backoff
        self.random = random
    }

    /// Whether `attempt` is the one in progress (events of a replaced socket are dropped).
    func isCurrent(_ attempt: Int) -> Bool { attempt == self.attempt }

    /// The attempt in progress, or the last one.
    var currentAttempt: Int { attempt }

    /// Whether requests can be sent now (the handshake has come).
    var canSend: Bool {
        switch phase {
        case .authenticating: return !awaitingToken
        case .connected: return true
        case .disconnected, .gettingToken, .connecting: return false
        }
    }

    // MARK: The app

    /// Connect, unless interrupted, connecting already, or waiting to reconnect.
    mutating func open() -> [Action] {
        guard interruptions.isEmpty, phase == .disconnected, !reconnectScheduled else { return [] }
        return begin()
    }

    /// Close and stay closed for `reason` until ``resume(_:)``.
    mutating func interrupt(_ reason: String, now: Double) -> [Action] {
        interruptions.insert(reason)
        var actions: [Action] = []
        if reconnectScheduled {
            reconnectScheduled = false
            actions.append(.cancelReconnect)
        }
        return actions + end(now: now, closing: true)
    }

    /// `reason` no longer holds; with no other, connect at once (the backoff starts over).
    mutating func resume(_ reason: String) -> [Action] {
        interruptions.remove(reason)
        guard interruptions.isEmpty, phase == .disconnected else { return [] }
        backoff.reset()
        var actions: [Action] = []
        if reconnectScheduled {
            reconnectScheduled = false
            actions.append(.cancelReconnect)
        }
        return actions + begin()
    }

    /// The token changed (a sign-in, a refresh, a sign-out, or a token provider set): a live connection
    /// sends the new one; one still being set up asks for it again before its handshake is answered.
    mutating func tokenChanged() -> [Action] {
        switch phase {
        case .connected(let attempt):
            return [.requestToken(forceRefresh: false, attempt: attempt)]
        case .gettingToken, .connecting, .authenticating:
            // The token in hand (or being fetched, or sent) may be the old one: fetched again once it can
            // be used (after the handshake, or after the auth in flight is answered).
            pendingTokenChange = true
            return []
        case .disconnected:
            return []
        }
    }
    private var pendingTokenChange = false
    /// Between a handshake and the token asked for after it: requests wait, so that the auth goes first.
    private var awaitingToken = false

    /// Something was sent (the keepalive counts from the last send).
    mutating func sent(now: Double) { lastSentAt = now }

    // MARK: The token provider, the socket and the server

    /// The provider answered for `attempt` (nil: nobody is signed in).
    mutating func tokenArrived(_ token: String?, attempt: Int, now: Double) -> [Action] {
        guard attempt == self.attempt else { return [] }
        switch phase {
        case .gettingToken:
            phase = .connecting(attempt: attempt, token: token)
            return [.openTransport(attempt: attempt)]
        case .authenticating where awaitingToken:
            // The fresh token of a connection whose handshake came: it goes first, then the rest.
            awaitingToken = false
            guard let token else {
                phase = .connected(attempt: attempt)
                return [.restoreState]
            }
            return [.sendAuth(token, attempt: attempt), .restoreState]
        case .connected:
            // A live connection's new token (or its sign-out).
            if let token {
                phase = .authenticating(attempt: attempt)
                return [.sendAuth(token, attempt: attempt)]
            }
            return [.sendUnauth]
        case .disconnected, .connecting, .authenticating:
            return []
        }
    }

    /// The server's handshake on the socket of `attempt`.
    mutating func handshake(serverTime: Int64, attempt: Int, now: Double) -> [Action] {
        guard case .connecting(attempt, let token) = phase else { return [] }
        readyAt = now
        lastSentAt = now
        var actions: [Action] = [.startKeepalive]
        if !sentStats {
            sentStats = true
            actions.append(.sendStats)
        }
        if pendingTokenChange {
            // The token changed since it was fetched: ask again; requests wait for it.
            pendingTokenChange = false
            phase = .authenticating(attempt: attempt)
            awaitingToken = true
            return actions + [.ready(serverTime: serverTime), .requestToken(forceRefresh: false, attempt: attempt)]
        }
        if let token {
            phase = .authenticating(attempt: attempt)
            actions.append(.sendAuth(token, attempt: attempt))
        } else {
            phase = .connected(attempt: attempt)
        }
        return actions + [.ready(serverTime: serverTime), .restoreState]
    }

    /// The server answered the auth sent on `attempt`'s connection.
    mutating func authAnswered(ok: Bool, attempt: Int, now: Double) -> [Action] {
        guard case .authenticating(attempt) = phase else { return [] }
        guard ok else {
            // A refused token: reconnect with a fresh one (the SDKs' answer to `invalid_token` and
            // `expired_token`).
            forceTokenRefresh = true
            return end(now: now, closing: true)
        }
        phase = .connected(attempt: attempt)
        if pendingTokenChange {
            pendingTokenChange = false
            return [.requestToken(forceRefresh: false, attempt: attempt)]
        }
        return []
    }

    /// The socket of `attempt` closed (either side, or it never opened).
    mutating func transportClosed(attempt: Int, now: Double) -> [Action] {
        guard attempt == self.attempt else { return [] }
        switch phase {
        case .connecting, .authenticating, .connected: return end(now: now, closing: false)
        case .disconnected, .gettingToken: return []
        }
    }

    /// `s`: the server will never serve this client; no reconnect for the app's life (§1.5).
    mutating func serverShutdown(now: Double) -> [Action] { interrupt("server-shutdown", now: now) }

    /// `ac`: the token is no longer good: reconnect with a refreshed one (§3.4).
    mutating func authRevoked(now: Double) -> [Action] {
        forceTokenRefresh = true
        return end(now: now, closing: true)
    }

    /// `r`: connect again (to the host the server named).
    mutating func serverReset(now: Double) -> [Action] { end(now: now, closing: true) }

    /// The keepalive timer ticked.
    mutating func keepaliveTick(now: Double) -> [Action] {
        guard canSend, now - lastSentAt >= Self.keepaliveSeconds - 1 else { return [] }
        lastSentAt = now
        return [.sendKeepalive]
    }

    /// The reconnect delay has passed.
    mutating func reconnectDue() -> [Action] {
        guard reconnectScheduled else { return [] }
        reconnectScheduled = false
        guard interruptions.isEmpty, phase == .disconnected else { return [] }
        return begin()
    }

    // MARK: Steps

    private mutating func begin() -> [Action] {
        attempt += 1
        guard hasTokenProvider else {
            phase = .connecting(attempt: attempt, token: nil)
            return [.openTransport(attempt: attempt)]
        }
        phase = .gettingToken(attempt: attempt)
        let force = forceTokenRefresh
        forceTokenRefresh = false
        return [.requestToken(forceRefresh: force, attempt: attempt)]
    }

    /// The connection ends (the socket closing itself when not `closing`); then a reconnect is
    /// scheduled unless interrupted.
    private mutating func end(now: Double, closing: Bool) -> [Action] {
        var actions: [Action] = []
        switch phase {
        case .disconnected:
            return []
        case .gettingToken:
            // Nothing open: the token's answer is dropped (its attempt is over).
            attempt += 1
            pendingTokenChange = false
            phase = .disconnected
        case .connecting, .authenticating, .connected:
            let wasReady = readyAt != nil
            if closing { actions.append(.closeTransport) }
            actions += [.stopKeepalive, .connectionEnded(wasReady: wasReady)]
            if !wasReady { attemptsThatFailed += 1 }
            backoff.connectionEnded(after: readyAt.map { now - $0 })
            readyAt = nil
            pendingTokenChange = false
            awaitingToken = false
            attempt += 1
            phase = .disconnected
        }
        if interruptions.isEmpty {
            reconnectScheduled = true
            actions.append(.scheduleReconnect(afterSeconds: backoff.wait(random: random())))
        }
        return actions
    }
}
