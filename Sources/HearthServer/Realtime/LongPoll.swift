import HearthCore
import HearthSupport
import HearthProtocol

/// The long-polling transport `/.lp` (docs/protocol.md §1.10): browsers whose WebSocket once failed
/// start with it. A realtime session runs over a ``LongPollConnection`` sink exactly as over a WebSocket.
/// `LongPolls` is the sessions by connection id, and their timers: the one owner of both. Loop thread only.
final class LongPolls {
    private var connections: [String: LongPollConnection] = [:]
    /// Set when the loop starts: a connection answers its held poll in the loop's next turn.
    var executor: (any LoopExecutor)?
    /// The transport's memory budget, which sessions' unfinished messages take from (nil: not counted).
    weak var budget: (any HeldMemoryBudget)?
    /// Where a session closed for want of memory is said.
    var log: Log?

    var count: Int { connections.count }

    /// A poll, a session's start (`start=t`, which `open` makes a realtime session of), or its end.
    func answer(
        _ request: HTTPRequest, responder: any HTTPResponder, now: Int64,
        open: (HTTPRequest, LongPollConnection) -> (any RealtimeSessionHandle)?
    ) {
        var query: [String: String] = [:]
        for item in request.queryItems where query[item.name] == nil { query[item.name] = item.value }
        if query["start"] == "t" {
            let connection = LongPollConnection(
                connectionID: DatabaseServer.sessionID(), password: DatabaseServer.sessionID(), callback: query["cb"] ?? "", owner: self)
            connection.lastPoll = now
            connections[connection.connectionID] = connection
            connection.session = open(request, connection)
            responder.respond(connection.startResponse())
            return
        }
        guard let id = query["id"], let connection = connections[id],
            ConstantTime.equal(connection.password, query["pw"] ?? "")
        else {
            if query["disconn"] == "t" || query["dframe"] == "t" {
                responder.respond(RESTResponses.script(""))
            } else {
                // Unknown session: tell the client to close; it reconnects with a fresh one.
                responder.respond(RESTResponses.script("pLPCommand('close');"))
            }
            return
        }
        if query["dframe"] == "t" {
            responder.respond(connection.disconnectFrame())
            return
        }
        if query["disconn"] == "t" {
            responder.respond(RESTResponses.script(""))
            connection.end()
            return
        }
        connection.lastPoll = now
        connection.receiveSegments(request.queryItems)
        connection.poll(responder, now: now)
    }

    /// Answers polls held too long, and ends sessions nobody polls.
    func tick(now: Int64) {
        for connection in Array(connections.values) {
            if now - connection.lastPoll > ServerLimits.longPollIdleMilliseconds && !connection.isHolding {
                connection.end()
            } else if connection.isHolding && now - connection.heldSince > ServerLimits.longPollHoldMilliseconds {
                connection.flush()
            }
        }
    }

    /// The server stops: every session ends (its onDisconnect runs).
    func endAll() {
        for connection in Array(connections.values) { connection.end() }
    }

    /// A session ended (LongPollConnection.end).
    fileprivate func forget(_ connectionID: String) { connections[connectionID] = nil }
}

/// One long-poll session: messages queued for the next poll, numbered responses, segments reassembled.
/// Loop thread only.
final class LongPollConnection: RealtimeSink {
    let connectionID: String
    let password: String
    let callback: String
    unowned let owner: LongPolls
    var session: (any RealtimeSessionHandle)?
    var lastPoll: Int64 = 0
    private(set) var heldSince: Int64 = 0
    private var held: (any HTTPResponder)?
    private var pending: [[UInt8]] = []
    private var pendingBytes = 0
    private var budget = OutboundBudget(limitBytes: ServerLimits.outboundBytesPerConnectionMax)
    private var nextPacket = 1
    private var segments = LongPollSegments(
        pendingSegmentsMax: ServerLimits.longPollSegmentsPendingMax,
        pendingBytesMax: ServerLimits.realtimeMessageBytesMax)
    private var ended = false
    private var closeAfterFlush = false
    /// What this session holds of the transport's memory budget for its messages (see `holdBudget`).
    private var heldMessages = HeldMessageBytes()

    init(connectionID: String, password: String, callback: String, owner: LongPolls) {
        self.connectionID = connectionID
        self.password = password
        self.callback = callback.filter { $0.isLetter || $0.isNumber || $0 == "_" }
        self.owner = owner
    }

    var isHolding: Bool { held != nil }
    var splitsLargeMessages: Bool { false }

    // MARK: RealtimeSink

    func sendMessage(_ frames: [[UInt8]]) -> Bool {
        guard !ended, !closeAfterFlush else { return false }
        guard !budget.isOver(queuedBytes: pendingBytes) else { return false }
        budget.willQueue(messageBytes: frames.reduce(0) { $0 + $1.count }, queuedBytes: pendingBytes)
        for bytes in frames {
            pending.append(bytes)
            pendingBytes += bytes.count
        }
        if held != nil { scheduleFlush() }
        return true
    }

    private var flushScheduled = false

    /// Answers the held poll once the loop has finished what it is doing, so a write's pushes and its
    /// `ok` (queued in one turn) travel in one packet.
    private func scheduleFlush() {
        guard !flushScheduled else { return }
        guard let executor = owner.executor else { return flush() }
        flushScheduled = true
        let handle = LoopBound(self)
        executor.execute {
            handle.value.flushScheduled = false
            handle.value.flush()
        }
    }

    func close(reason: String, immediately: Bool) {
        guard !ended else { return }
        closeAfterFlush = true
        if immediately {
            pending = []
            pendingBytes = 0
        }
        if held != nil { flush() } else { end() }
    }

    // MARK: Responses

    /// The start response (§1.10): the forwarding functions, `start` and packet 0 with the handshake.
    func startResponse() -> HTTPResponse {
        var text = "function pLPCommand(c,a1,a2,a3,a4){var f=parent.window[\"pLPCommand\(callback)\"];if(f)f(c,a1,a2,a3,a4);}\n"
        text += "function pRTLPCB(pN,data){var f=parent.window[\"pRTLPCB\(callback)\"];if(f)f(pN,data);}\n"
        text += "pLPCommand('start','\(connectionID)','\(password)');\n"
        text += "pRTLPCB(0,\(takePending()));\n"
        return RESTResponses.script(text)
    }

    func disconnectFrame() -> HTTPResponse {
        let url = "/.lp?disconn=t&id=\(connectionID)&pw=\(password)"
        let html = "<html><body><script>window.addEventListener('unload',function(){try{var x=new XMLHttpRequest();"
            + "x.open('GET','\(url)',false);x.send(null);}catch(e){}});</script></body></html>"
        return RESTResponses.withCommonHeaders(HTTPResponse(
            status: 200, headers: [("content-type", "text/html; charset=utf-8")], body: Array(html.utf8)))
    }

    private func takePending() -> String {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, message) in pending.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += message
        }
        out.append(UInt8(ascii: "]"))
        pending = []
        pendingBytes = 0
        return String(decoding: out, as: UTF8.self)
    }

    /// A new poll: an older held one is answered (with what is queued, or `[]`); this one is held until
    /// there is something to send.
    func poll(_ responder: any HTTPResponder, now: Int64) {
        if held != nil { flush() }
        if ended {
            responder.respond(RESTResponses.script("pLPCommand('close');"))
            return
        }
        held = responder
        heldSince = now
        if !pending.isEmpty || closeAfterFlush { flush() }
    }

    /// Answers the held poll with the next packet.
    func flush() {
        guard let responder = held else { return }
        held = nil
        let packet = nextPacket
        nextPacket += 1
        var text = "pRTLPCB(\(packet),\(takePending()));"
        if closeAfterFlush { text += "pLPCommand('close',\(packet));" }
        responder.respond(RESTResponses.script(text))
        if closeAfterFlush { end() }
    }

    /// The session is over: forgotten, and its realtime session closed (onDisconnect runs).
    func end() {
        guard !ended else { return }
        ended = true
        releaseBudget()
        if let responder = held {
            held = nil
            responder.respond(RESTResponses.script("pLPCommand('close');"))
        }
        owner.forget(connectionID)
        let session = self.session
        self.session = nil
        session?.closed()
    }

    // MARK: Client → server segments

    /// Delivers every message the poll's segments complete, in order (``LongPollSegments``). Segments
    /// no client sends (numbers out of bounds, not base64) end the session; so do messages that do not
    /// fit the memory budget, before any of them is handled.
    func receiveSegments(_ items: [(name: String, value: String)]) {
        let messages: [[UInt8]]
        do { messages = try segments.receive(items) } catch {
            close(reason: "bad long-poll segment: \(error)", immediately: true)
            return
        }
        guard holdBudget(segments.pendingByteCount + messages.reduce(0) { $0 + $1.count }) else { return }
        for message in messages {
            session?.receive(frame: message)
            if ended { return }
        }
        _ = holdBudget(segments.pendingByteCount)
    }

    /// Holds, from the transport's budget, what `held` bytes of messages need (``HeldMessageBytes``, as a
    /// WebSocket connection does), or ends the session, saying why, when that does not fit: the SDK
    /// reconnects and sends its writes again.
    private func holdBudget(_ held: Int) -> Bool {
        guard let budget = owner.budget, let refusal = heldMessages.hold(held, from: budget) else { return true }
        owner.log?("realtime: long-poll connection's message of \(held) bytes\(refusal.detail.map { " (\($0))" } ?? "") closed: \(refusal.reason)")
        close(reason: refusal.reason, immediately: true)
        return false
    }

    private func releaseBudget() {
        if let budget = owner.budget { heldMessages.release(to: budget) }
    }
}
