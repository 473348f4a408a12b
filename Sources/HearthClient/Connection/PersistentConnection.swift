import Foundation
import HearthSupport
import HearthCore
import HearthWire

/// What the connection tells the ``Repo`` (on the repo's queue).
protocol PersistentConnectionDelegate: AnyObject {
    /// The handshake arrived: the client is connected; `serverTime` is the server's clock then (ms).
    func connectionReady(serverTime: Int64)
    /// The connection is gone; it reconnects by itself unless interrupted.
    func connectionLost()
    /// A `d` or `m` push.
    func dataPushed(at path: Path, data: Node, merge: [(Path, Node)]?, tag: Int64?)
    /// A `c` push: the listen is no longer served.
    func listenRevoked(at path: Path, query: WireQuery?)
    /// The server will never serve this client (`s`): the reason, for the log.
    func serverShutdown(reason: String)
}

/// Why a request was answered as it was: the server's status (`ok`, `permission_denied`, `datastale`,
/// …, or the client's own `disconnect` and `write_canceled`) and its data.
struct RequestOutcome: Error, Sendable {
    var status: String
    var data: [UInt8]
    var isOK: Bool { status == "ok" }
    /// The server's message, when it sent one as a string.
    var reason: String? { (try? Node(jsonBytes: data))?.stringValue }

    static let disconnected = RequestOutcome(status: "disconnect", data: Array(#""Client was disconnected""#.utf8))
    static let canceled = RequestOutcome(status: "write_canceled", data: Array("null".utf8))
}

/// The realtime protocol's client side (docs/protocol.md §1–§3): one connection at a time to the
/// database, requests numbered and answered, listens and unacknowledged writes restored on every new
/// connection, onDisconnect operations queued while offline, keepalives, and reconnection with backoff.
/// When to connect, authenticate and reconnect is decided by ``ConnectionLifecycle``, a value; this is
/// the shell that does what it says and keeps the requests. Confined to the repo's queue; transport events
/// are carried onto it.
final class PersistentConnection: @unchecked Sendable {  // confined to `queue`
    private let queue: DispatchQueue
    private(set) var info: RepoInfo
    private let makeTransport: TransportFactory
    weak var delegate: (any PersistentConnectionDelegate)?

    private var lifecycle = ConnectionLifecycle()
    /// The socket of the attempt in progress, if one is open.
    private var transport: (any RealtimeTransport)?
    private var lastSessionID: String?
    private var reconnect: DispatchWorkItem?
    private var keepalive: DispatchSourceTimer?
    /// Seconds on a monotonic clock, for the lifecycle (tests of the lifecycle pass their own).
    private let clock: () -> Double

    private var nextRequest: Int64 = 1
    /// Who waits for each request's answer. Listens and writes are sent again on the next connection, so
    /// theirs are simply dropped with a connection; the others (gets, onDisconnect) fail with it.
    private var answers: [Int64: (answer: (RequestOutcome) -> Void, resent: Bool)] = [:]

    private struct Listen {
        var query: WireQuery?
        var hash: () -> String
        var answered: (RequestOutcome) -> Void
    }
    private var listens: [ListenKey: Listen] = [:]

    private struct Put {
        var id: Int64
        var request: ClientRequest
        var answered: (RequestOutcome) -> Void
        /// Compare-and-set puts (transactions) are not sent again after a disconnect: they fail with
        /// `disconnect` and the transaction runs again (§1.9).
        var isCompareAndSet: Bool
        var sent = false
    }
    private var puts: [Put] = []
    private var onDisconnectQueue: [(ClientRequest, (RequestOutcome) -> Void)] = []

    /// Supplies an auth token (forcing a refresh when asked); nil when signed out.
    var authToken: (@Sendable (Bool, @escaping @Sendable (String?) -> Void) -> Void)? {
        didSet { lifecycle.hasTokenProvider = authToken != nil }
    }

    init(
        info: RepoInfo, queue: DispatchQueue, transport: @escaping TransportFactory,
        clock: @escaping () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
    ) {
        self.info = info
        self.queue = queue
        makeTransport = transport
        self.clock = clock
    }

    var isConnected: Bool { lifecycle.canSend }

    /// Attempts that ended without a connection (refused, an untrusted certificate, no handshake):
    /// tests wait for them instead of for time.
    var attemptsThatFailed: Int { lifecycle.attemptsThatFailed }

    var backoff: ReconnectBackoff {
        get { lifecycle.backoff }
        set { lifecycle.backoff = newValue }
    }

    // MARK: Opening and closing

    /// Connects unless interrupted or already connecting.
    func open() { perform(lifecycle.open()) }

    func interrupt(_ reason: String) { perform(lifecycle.interrupt(reason, now: clock())) }

    func resume(_ reason: String) { perform(lifecycle.resume(reason)) }

    /// Does what the lifecycle decided, in order.
    private func perform(_ actions: [ConnectionLifecycle.Action]) {
        for action in actions {
            switch action {
            case .requestToken(let force, let attempt):
                requestToken(forceRefresh: force, attempt: attempt)
            case .openTransport(let attempt):
                openTransport(attempt: attempt)
            case .closeTransport:
                transport?.close()
                transport = nil
            case .scheduleReconnect(let seconds):
                let work = DispatchWorkItem { [weak self] in
                    guard let self else { return }
                    reconnect = nil
                    perform(lifecycle.reconnectDue())
                }
                reconnect = work
                queue.asyncAfter(deadline: .now() + seconds, execute: work)
            case .cancelReconnect:
                reconnect?.cancel()
                reconnect = nil
            case .sendAuth(let token, let attempt):
                send(.auth(credential: token)) { [weak self] outcome in
                    guard let self else { return }
                    perform(lifecycle.authAnswered(ok: outcome.isOK, attempt: attempt, now: clock()))
                }
            case .sendUnauth:
                send(.unauth)
            case .sendStats:
                send(.stats(["sdk.swift.\(HearthClientVersion.string.replacingOccurrences(of: ".", with: "-"))": 1]))
            case .restoreState:
                restoreState()
            case .ready(let serverTime):
                delegate?.connectionReady(serverTime: serverTime)
            case .connectionEnded(let wasReady):
                transport = nil
                connectionEnded(wasReady: wasReady)
            case .startKeepalive:
                startKeepalive()
            case .stopKeepalive:
                keepalive?.cancel()
                keepalive = nil
            case .sendKeepalive:
                transport?.send(Array("0".utf8))
            }
        }
    }

    private func openTransport(attempt: Int) {
        guard let url = info.connectionURL(lastSessionID: lastSessionID) else {
            // A URL that cannot be written cannot get better: stay offline.
            perform(lifecycle.interrupt("bad-url", now: clock()))
            return
        }
        let decoder = InboundDecoder()
        let inbox = InboundInbox(queue: queue) { [weak self] event in self?.transportEvent(event, attempt: attempt) }
        let opened = makeTransport(url) { event in
            if let decoded = decoder.decode(event) { inbox.put(decoded) }
        }
        transport = opened
        opened.connect()
    }

    private func transportEvent(_ event: InboundEvent, attempt: Int) {
        switch event {
        case .opened:
            break  // the server speaks first: the handshake makes the connection ready
        case .message(let message):
            guard lifecycle.isCurrent(attempt) else { return }
            received(message, attempt: attempt)
        case .unreadable:
            guard lifecycle.isCurrent(attempt) else { return }
            perform(lifecycle.serverReset(now: clock()))
        case .closed:
            perform(lifecycle.transportClosed(attempt: attempt, now: clock()))
        }
    }

    /// The connection ended (either side): answers what can no longer be answered.
    private func connectionEnded(wasReady: Bool) {
        // Outstanding answers: listens and plain writes are sent again on the next connection;
        // compare-and-set writes, gets and onDisconnect requests fail now.
        let pending = answers
        answers = [:]
        for index in puts.indices { puts[index].sent = false }
        var failed: [(RequestOutcome) -> Void] = []
        puts.removeAll { put in
            guard put.isCompareAndSet else { return false }
            failed.append(put.answered)
            return true
        }
        for (_, waiting) in pending.sorted(by: { $0.key < $1.key }) where !waiting.resent {
            failed.append(waiting.answer)
        }
        for answer in failed { answer(.disconnected) }
        if wasReady { delegate?.connectionLost() }
    }

    // MARK: Receiving

    private func received(_ message: ServerMessage, attempt: Int) {
        switch message {
        case .handshake(let timestamp, let host, let sessionID):
            if !host.isEmpty { info.internalHost = host }
            lastSessionID = sessionID
            perform(lifecycle.handshake(serverTime: timestamp, attempt: attempt, now: clock()))
        case .reset(let host):
            if !host.isEmpty { info.internalHost = host }
            perform(lifecycle.serverReset(now: clock()))
        case .shutdown(let reason):
            delegate?.serverShutdown(reason: reason)
            perform(lifecycle.serverShutdown(now: clock()))
        case .pong, .otherControl:
            break
        case .response(let number, let status, let data):
            answers.removeValue(forKey: number)?.answer(RequestOutcome(status: status, data: data))
        case .push(let action, let body):
            push(action, body)
        case .set(let path, let data, let tag):
            delegate?.dataPushed(at: path, data: data, merge: nil, tag: tag)
        case .merge(let path, let children, let tag):
            delegate?.dataPushed(at: path, data: .empty, merge: children, tag: tag)
        }
    }

    private func push(_ action: String, _ body: [String: [UInt8]]) {
        let path = Path(body[Wire.path].flatMap(JSONPlainScalar.string) ?? "")
        switch action {
        case Wire.Push.listenRevoked.rawValue:
            // `q` is an array holding the query object as the client sent it (§3.3).
            var query: WireQuery?
            if let raw = body[Wire.query], let node = try? Node(jsonBytes: raw) {
                query = WireQuery.from(wire: node.child(ChildKey("0")))
            }
            delegate?.listenRevoked(at: path, query: query)
        case Wire.Push.authRevoked.rawValue:
            perform(lifecycle.authRevoked(now: clock()))
        default:
            break
        }
    }

    // MARK: Sending

    @discardableResult
    private func send(_ request: ClientRequest, resent: Bool = false, answered: ((RequestOutcome) -> Void)? = nil) -> Bool {
        guard lifecycle.canSend, let transport else { return false }
        let number = nextRequest
        nextRequest += 1
        if let answered { answers[number] = (answered, resent) }
        for frame in WireFrames.split(request.encoded(number: number)) { transport.send(frame) }
        lifecycle.sent(now: clock())
        return true
    }

    /// A new connection, once authenticated: every listen, every unacknowledged write, queued
    /// onDisconnect operations, in that order (§1.4).
    private func restoreState() {
        for (key, listen) in listens.sorted(by: { ($0.key.path, $0.key.tag ?? 0) < ($1.key.path, $1.key.tag ?? 0) }) {
            sendListen(key, listen)
        }
        for index in puts.indices { sendPut(at: index) }
        let queued = onDisconnectQueue
        onDisconnectQueue = []
        for (request, answered) in queued { send(request, answered: answered) }
    }

    /// Asks the provider for a token for `attempt` (refreshed first when `forceRefresh`). When it answers
    /// at once (a fresh token, nobody signed in), the lifecycle hears it before this returns, so a token
    /// change reaches a live connection ahead of anything the app sends next.
    private func requestToken(forceRefresh: Bool, attempt: Int) {
        guard let provider = authToken else {
            perform(lifecycle.tokenArrived(nil, attempt: attempt, now: clock()))
            return
        }
        let queue = self.queue
        let returned = Locked(false)
        let inline = Locked<String??>(nil)
        provider(forceRefresh) { [weak self] token in
            let late = returned.withLock { returned in
                if !returned { inline.withLock { $0 = .some(token) } }
                return returned
            }
            guard late else { return }
            queue.async { [weak self] in
                guard let self else { return }
                perform(lifecycle.tokenArrived(token, attempt: attempt, now: clock()))
            }
        }
        returned.withLock { $0 = true }
        if let token = inline.withLock({ $0 }) { perform(lifecycle.tokenArrived(token, attempt: attempt, now: clock())) }
    }

    /// The token changed on a live connection (a sign-in, a refresh, a sign-out): it sends the new one,
    /// or drops its auth when there is none.
    func refreshAuth() { perform(lifecycle.tokenChanged()) }

    private func sendListen(_ key: ListenKey, _ listen: Listen) {
        send(.listen(path: key.path, query: listen.query, tag: key.tag, hash: listen.hash()), resent: true) { [weak self] outcome in
            guard let self, self.listens[key] != nil else { return }
            if !outcome.isOK { self.listens[key] = nil }
            listen.answered(outcome)
        }
    }

    private func sendPut(at index: Int) {
        guard isConnected else { return }
        puts[index].sent = true
        let id = puts[index].id
        send(puts[index].request, resent: !puts[index].isCompareAndSet) { [weak self] outcome in
            guard let self, let position = puts.firstIndex(where: { $0.id == id }) else { return }
            let put = puts.remove(at: position)
            put.answered(outcome)
        }
    }

    private func startKeepalive() {
        keepalive?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let seconds = ConnectionLifecycle.keepaliveSeconds
        timer.schedule(deadline: .now() + seconds, repeating: seconds)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            perform(lifecycle.keepaliveTick(now: clock()))
        }
        timer.resume()
        keepalive = timer
    }

    // MARK: Requests

    func listen(_ key: ListenKey, query: WireQuery?, hash: @escaping () -> String, answered: @escaping (RequestOutcome) -> Void) {
        let listen = Listen(query: query, hash: hash, answered: answered)
        listens[key] = listen
        if isConnected { sendListen(key, listen) }
    }

    func unlisten(_ key: ListenKey, query: WireQuery?) {
        guard listens.removeValue(forKey: key) != nil else { return }
        send(.unlisten(path: key.path, query: query, tag: key.tag))
    }

    /// A set (`hash` makes it compare-and-set) or a merge, sent now or on the next connection.
    func write(id: Int64, _ request: ClientRequest, compareAndSet: Bool, answered: @escaping (RequestOutcome) -> Void) {
        puts.append(Put(id: id, request: request, answered: answered, isCompareAndSet: compareAndSet))
        sendPut(at: puts.count - 1)
    }

    /// An onDisconnect request: sent now, or queued until the next connection.
    func onDisconnect(_ request: ClientRequest, answered: @escaping (RequestOutcome) -> Void) {
        if !send(request, answered: answered) { onDisconnectQueue.append((request, answered)) }
    }

    /// A one-shot read; fails at once when not connected.
    func get(path: Path, query: WireQuery?, answered: @escaping (RequestOutcome) -> Void) {
        if !send(.get(path: path, query: query), answered: answered) { answered(.disconnected) }
    }

    /// Drops every write not yet acknowledged; each is answered `write_canceled`.
    func purgeOutstandingWrites() {
        let dropped = puts
        puts = []
        for put in dropped { put.answered(.canceled) }
    }
}
