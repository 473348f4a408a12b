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
/// Confined to the repo's queue; transport events are carried onto it.
final class PersistentConnection: @unchecked Sendable {  // confined to `queue`
    private let queue: DispatchQueue
    private(set) var info: RepoInfo
    private let makeTransport: TransportFactory
    weak var delegate: (any PersistentConnectionDelegate)?

    private enum State {
        case disconnected
        case connecting(any RealtimeTransport)
        case connected(any RealtimeTransport)
    }
    private var state = State.disconnected
    /// Why the connection must stay closed (`goOffline`, a server shutdown); empty when it may connect.
    private var interruptions: Set<String> = []
    /// Counts connection attempts, so events of a transport that was replaced are ignored.
    private var generation = 0
    private var connectedAt: Date?
    /// Attempts that ended without a connection (refused, an untrusted certificate, no handshake):
    /// tests wait for them instead of for time.
    private(set) var attemptsThatFailed = 0
    private var lastSessionID: String?
    private var sentStats = false
    var backoff = ReconnectBackoff()
    private var reconnect: DispatchWorkItem?
    private var keepalive: DispatchSourceTimer?
    private var lastSent = Date()
    private var assembler = WireFrameAssembler(messageBytesMax: ClientLimits.messageBytesMax)

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
    var authToken: (@Sendable (Bool, @escaping @Sendable (String?) -> Void) -> Void)?
    private var forceTokenRefresh = false

    init(info: RepoInfo, queue: DispatchQueue, transport: @escaping TransportFactory) {
        self.info = info
        self.queue = queue
        makeTransport = transport
    }

    var isConnected: Bool {
        if case .connected = state { return true }
        return false
    }

    // MARK: Opening and closing

    /// Connects unless interrupted or already connecting.
    func open() {
        guard interruptions.isEmpty, case .disconnected = state, reconnect == nil else { return }
        connect()
    }

    func interrupt(_ reason: String) {
        interruptions.insert(reason)
        reconnect?.cancel()
        reconnect = nil
        close()
    }

    func resume(_ reason: String) {
        interruptions.remove(reason)
        guard interruptions.isEmpty, case .disconnected = state else { return }
        backoff.reset()
        reconnect?.cancel()
        reconnect = nil
        connect()
    }

    private func connect() {
        generation += 1
        let attempt = generation
        guard let url = info.connectionURL(lastSessionID: lastSessionID) else {
            interruptions.insert("bad-url")
            return
        }
        let queue = self.queue
        let transport = makeTransport(url) { [weak self] event in
            queue.async { [weak self] in self?.transportEvent(event, attempt: attempt) }
        }
        state = .connecting(transport)
        assembler.reset()
        transport.connect()
    }

    private func close() {
        switch state {
        case .connecting(let transport), .connected(let transport):
            transport.close()
            ended()
        case .disconnected:
            break
        }
    }

    private func transportEvent(_ event: TransportEvent, attempt: Int) {
        guard attempt == generation else { return }
        switch event {
        case .opened:
            break  // the server speaks first: the handshake makes the connection ready
        case .message(let frame):
            let message: [UInt8]?
            do { message = try assembler.receive(frame) } catch {
                close()
                return
            }
            if let message { received(message) }
        case .closed:
            ended()
        }
    }

    /// The connection ended (either side): answers what can no longer be answered, and schedules the
    /// next attempt.
    private func ended() {
        guard !isDisconnected else { return }
        let wasConnected = isConnected
        if !wasConnected { attemptsThatFailed += 1 }
        generation += 1
        state = .disconnected
        keepalive?.cancel()
        keepalive = nil
        let lasted = connectedAt.map { Date().timeIntervalSince($0) }
        connectedAt = nil
        backoff.connectionEnded(after: lasted)
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
        if wasConnected { delegate?.connectionLost() }
        scheduleReconnect()
    }

    private var isDisconnected: Bool {
        if case .disconnected = state { return true }
        return false
    }

    private func scheduleReconnect() {
        guard interruptions.isEmpty else { return }
        let wait = backoff.wait(random: Double.random(in: 0..<1))
        let work = DispatchWorkItem { [weak self] in
            guard let self else { return }
            reconnect = nil
            guard interruptions.isEmpty, isDisconnected else { return }
            connect()
        }
        reconnect = work
        queue.asyncAfter(deadline: .now() + wait, execute: work)
    }

    // MARK: Receiving

    private func received(_ bytes: [UInt8]) {
        guard let message = ServerMessage.parse(bytes) else { return }
        switch message {
        case .handshake(let timestamp, let host, let sessionID):
            guard case .connecting(let transport) = state else { return }
            if !host.isEmpty { info.internalHost = host }
            lastSessionID = sessionID
            let receivedAt = Date()
            // The token comes first, so that auth goes out before any listen or write: the server
            // answers them in order, each under the auth it has by then.
            withToken { [weak self] token in
                guard let self, case .connecting(let current) = self.state, current === transport else { return }
                self.state = .connected(transport)
                self.connectedAt = Date()
                self.startKeepalive()
                self.sendStats()
                if let token { self.sendAuth(token) }
                let waited = Int64(Date().timeIntervalSince(receivedAt) * 1000)
                self.delegate?.connectionReady(serverTime: timestamp &+ waited)
                self.restoreState()
            }
        case .reset(let host):
            if !host.isEmpty { info.internalHost = host }
            close()
        case .shutdown(let reason):
            interruptions.insert("server-shutdown")
            delegate?.serverShutdown(reason: reason)
            close()
        case .pong, .otherControl:
            break
        case .response(let number, let status, let data):
            answers.removeValue(forKey: number)?.answer(RequestOutcome(status: status, data: data))
        case .push(let action, let body):
            push(action, body)
        case .set(let path, let data, let tag):
            delegate?.dataPushed(at: path, data: data, merge: nil, tag: tag)
        }
    }

    private func push(_ action: String, _ body: [String: [UInt8]]) {
        let path = Path(body[Wire.path].flatMap(JSONPlainScalar.string) ?? "")
        switch action {
        case Wire.Push.set.rawValue, Wire.Push.merge.rawValue:
            guard let raw = body[Wire.data] else { return }
            let tag = body[Wire.tag].flatMap(WireFields.integer)
            if action == Wire.Push.merge.rawValue {
                guard let entries = JSONObjectSplitter.split(raw) else { return }
                var children: [(Path, Node)] = []
                for (key, value) in entries {
                    guard let node = try? Node(jsonBytes: Array(value)) else { return }
                    children.append((Path(key), node))
                }
                delegate?.dataPushed(at: path, data: .empty, merge: children, tag: tag)
            } else {
                guard let node = try? Node(jsonBytes: raw) else { return }
                delegate?.dataPushed(at: path, data: node, merge: nil, tag: tag)
            }
        case Wire.Push.listenRevoked.rawValue:
            // `q` is an array holding the query object as the client sent it (§3.3).
            var query: WireQuery?
            if let raw = body[Wire.query], let node = try? Node(jsonBytes: raw) {
                query = WireQuery.from(wire: node.child(ChildKey("0")))
            }
            delegate?.listenRevoked(at: path, query: query)
        case Wire.Push.authRevoked.rawValue:
            // The token is no longer good: reconnect with a refreshed one (§3.4).
            forceTokenRefresh = true
            close()
        default:
            break
        }
    }

    // MARK: Sending

    @discardableResult
    private func send(_ request: ClientRequest, resent: Bool = false, answered: ((RequestOutcome) -> Void)? = nil) -> Bool {
        guard case .connected(let transport) = state else { return false }
        let number = nextRequest
        nextRequest += 1
        if let answered { answers[number] = (answered, resent) }
        for frame in WireFrames.split(request.encoded(number: number)) { transport.send(frame) }
        lastSent = Date()
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

    private func sendStats() {
        guard !sentStats else { return }
        sentStats = true
        send(.stats(["sdk.swift.\(HearthClientVersion.string.replacingOccurrences(of: ".", with: "-"))": 1]))
    }

    /// Calls `body` on the queue with the provider's token (refreshed first when the server refused the
    /// last one), or nil when there is no provider or no signed-in user. When the provider answers at
    /// once (no provider, a fresh token, signed out), `body` runs before this returns, so the auth goes
    /// out ahead of anything the app sends next; otherwise later, and not at all when the connection
    /// was replaced meanwhile.
    private func withToken(_ body: @escaping (String?) -> Void) {
        guard let provider = authToken else {
            body(nil)
            return
        }
        let force = forceTokenRefresh
        forceTokenRefresh = false
        let attempt = generation
        let queue = self.queue
        let box = CallbackBox(body)
        let returned = Locked(false)
        let inline = Locked<String??>(nil)
        provider(force) { [weak self] token in
            let late = returned.withLock { returned in
                if !returned { inline.withLock { $0 = .some(token) } }
                return returned
            }
            guard late else { return }
            queue.async { [weak self] in
                guard let self, attempt == self.generation else { return }
                box.value(token)
            }
        }
        returned.withLock { $0 = true }
        if let token = inline.withLock({ $0 }) { body(token) }
    }

    private func sendAuth(_ token: String) {
        send(.auth(credential: token)) { [weak self] outcome in
            guard let self, !outcome.isOK else { return }
            // A refused token: reconnect, asking for a fresh one (the SDKs' reaction to
            // `invalid_token` and `expired_token`).
            self.forceTokenRefresh = true
            self.close()
        }
    }

    /// The token changed on a live connection (a sign-in, a refresh, a sign-out): it sends the new one,
    /// or drops its auth when there is none.
    func refreshAuth() {
        guard isConnected else { return }
        withToken { [weak self] token in
            guard let self, self.isConnected else { return }
            if let token { self.sendAuth(token) } else { self.send(.unauth) }
        }
    }

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
        timer.schedule(deadline: .now() + Self.keepaliveSeconds, repeating: Self.keepaliveSeconds)
        timer.setEventHandler { [weak self] in
            guard let self, case .connected(let transport) = state else { return }
            if Date().timeIntervalSince(lastSent) >= Self.keepaliveSeconds - 1 {
                transport.send(Array("0".utf8))
                lastSent = Date()
            }
        }
        timer.resume()
        keepalive = timer
    }

    /// The SDKs send the frame `0` after 45 s without traffic (§1.7).
    static let keepaliveSeconds = 45.0

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
