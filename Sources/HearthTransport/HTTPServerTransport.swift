public import HearthProtocol
internal import CLibWebSockets
import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// How the transport listens and what it bounds.
public struct TransportConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Largest request body accepted; a larger one is answered 400 and the connection closed.
    public var requestBodyBytesMax: Int
    /// Bytes a streaming response may have queued before `send` refuses more (the slow-reader cut-off).
    public var outboundBufferBytesMax: Int
    /// Seconds a connection may sit in one state (headers arriving, body arriving): bounds slowloris.
    public var stateTimeoutSeconds: Int
    /// Seconds an idle keep-alive connection is kept.
    public var keepAliveTimeoutSeconds: Int
    /// PEM certificate and key for TLS; both nil serves plain HTTP.
    public var certificatePath: String?
    public var privateKeyPath: String?
    /// Milliseconds between ``HTTPHandler/tick(nowMilliseconds:)`` calls.
    public var tickIntervalMilliseconds: Int
    /// Seconds of silence on a WebSocket before a protocol ping, and before it is closed as dead.
    public var webSocketPingSeconds = ServerLimits.webSocketPingSeconds
    public var webSocketTimeoutSeconds = ServerLimits.webSocketTimeoutSeconds
    /// Seconds a WebSocket may keep more than a quarter of `outboundBufferBytesMax` queued (the soft limit).
    public var webSocketSoftLimitSeconds = ServerLimits.outboundSoftLimitSeconds

    /// Defaults are ``ServerLimits``'; tests pass smaller ones.
    public init(
        host: String = "127.0.0.1", port: Int = 9000, requestBodyBytesMax: Int = ServerLimits.requestBodyBytesMax,
        outboundBufferBytesMax: Int = ServerLimits.outboundBytesPerConnectionMax,
        stateTimeoutSeconds: Int = ServerLimits.requestStateTimeoutSeconds,
        keepAliveTimeoutSeconds: Int = ServerLimits.keepAliveTimeoutSeconds,
        certificatePath: String? = nil, privateKeyPath: String? = nil, tickIntervalMilliseconds: Int = 1000
    ) {
        self.host = host
        self.port = port
        self.requestBodyBytesMax = requestBodyBytesMax
        self.outboundBufferBytesMax = outboundBufferBytesMax
        self.stateTimeoutSeconds = stateTimeoutSeconds
        self.keepAliveTimeoutSeconds = keepAliveTimeoutSeconds
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
        self.tickIntervalMilliseconds = tickIntervalMilliseconds
    }
}

/// Why the transport could not start.
public struct TransportError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// An HTTP/1.1 server on Debian's libwebsockets, driven by a libuv loop this object owns.
///
/// One thread (`hearth.loop`) runs the loop: it owns every socket, every connection object and calls
/// the ``HTTPHandler`` (which owns the databases) — nothing here takes a lock on the request path. Other
/// threads reach the loop only through ``executor`` (a queue drained in one pass per wake-up, woken by
/// `uv_async_send`).
///
///     let transport = HTTPServerTransport(configuration: .init(port: 9000), handler: server)
///     try transport.start()   // listening when this returns
///     transport.stop()        // from any thread; returns when the loop has ended
public final class HTTPServerTransport: @unchecked Sendable {
    public let configuration: TransportConfiguration
    /// Called only on the loop thread.
    let handler: any HTTPHandler
    public let executor: Inbox

    // Loop-thread state (set up before the thread starts, torn down after it ends).
    private var loop: UnsafeMutablePointer<uv_loop_t>
    private var wakeup: UnsafeMutablePointer<uv_async_t>
    private var timer: UnsafeMutablePointer<uv_timer_t>
    /// Counts loop iterations (a prepare handle runs once before each poll): tells whether two lws
    /// callbacks came from one pass of lws over its input or from separate ones.
    private var iterationCounter: UnsafeMutablePointer<uv_prepare_t>
    fileprivate var loopIteration: UInt64 = 0
    /// WebSockets given frames since the loop last polled: written once per iteration, before it polls
    /// (see ``WebSocketConnection/flushBeforePoll()``).
    var webSocketsToFlush: [WebSocketConnection] = []
    /// Event streams given events since the loop last polled, written the same way
    /// (``Connection/flushBeforePoll()``).
    fileprivate var streamsToFlush: [Connection] = []
    private var context: OpaquePointer?
    private var protocols: UnsafeMutablePointer<lws_protocols>
    private var connections: [OpaquePointer: Connection] = [:]
    /// Upgraded WebSockets, and upgrade requests between the filter and the established callback.
    private var webSockets: [OpaquePointer: WebSocketConnection] = [:]
    private var upgrades: [OpaquePointer: HTTPRequest] = [:]
    /// The connection whose lws callback is running, if any: it may not be closed from inside, only by
    /// the callback returning -1.
    fileprivate var callbackWSI: OpaquePointer?
    /// Loop-thread scratch, allocated once: header values are copied out of lws through `headerScratch`,
    /// and every write is staged in `writeScratch` (LWS_PRE bytes of room, then up to one chunk).
    fileprivate let headerScratch = UnsafeMutableBufferPointer<CChar>.allocate(capacity: 16 * 1024 + 1)
    let writeScratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1024 + 64 * 1024)
    private var loopThread: Thread?
    nonisolated(unsafe) private var loopPthread: pthread_t?
    private let started = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private var startError: String?
    /// Read by other threads only after `started`.
    public private(set) var boundPort = 0

    public init(configuration: TransportConfiguration, handler: any HTTPHandler) {
        self.configuration = configuration
        self.handler = handler
        loop = .allocate(capacity: 1)
        wakeup = .allocate(capacity: 1)
        timer = .allocate(capacity: 1)
        iterationCounter = .allocate(capacity: 1)
        protocols = .allocate(capacity: 2)
        executor = Inbox()
    }

    deinit {
        loop.deallocate()
        wakeup.deallocate()
        timer.deallocate()
        iterationCounter.deallocate()
        protocols.deallocate()
        headerScratch.deallocate()
        writeScratch.deallocate()
    }

    /// Starts the loop thread and returns once the port is bound, or throws why it could not be.
    public func start() throws(TransportError) {
        let thread = Thread { [self] in self.runLoop() }
        thread.name = "hearth.loop"
        thread.stackSize = 8 << 20
        loopThread = thread
        thread.start()
        started.wait()
        if let startError { throw TransportError(description: startError) }
    }

    /// Stops accepting, ends streams, closes every connection and ends the loop thread. Any thread.
    public func stop() {
        executor.stop()
        ended.wait()
    }

    func assertOnLoop() {
        assert(loopPthread.map { pthread_equal($0, pthread_self()) != 0 } ?? false, "called off the loop thread")
    }

    // MARK: The loop

    private func flushWebSockets() {
        if !streamsToFlush.isEmpty {
            let streams = streamsToFlush
            streamsToFlush.removeAll(keepingCapacity: true)
            for stream in streams { stream.flushBeforePoll() }
        }
        guard !webSocketsToFlush.isEmpty else { return }
        let sockets = webSocketsToFlush
        webSocketsToFlush.removeAll(keepingCapacity: true)
        for socket in sockets { socket.flushBeforePoll() }
    }

    /// Sockets waiting to be flushed from which on a flush counts as a fan-out worth holding back.
    static let fanOutSocketsMin = 1_000
    /// Longest the loop holds a fan-out back for writes still committing: about one group commit.
    static let fanOutHoldSeconds = 0.002

    /// Before a large fan-out is written, lets writes that are still committing (their fsync takes far
    /// less than writing to thousands of sockets) finish first, so their pushes leave in the same sends.
    /// Without it a writer with several writes in flight splits them into alternating halves, each
    /// broadcast in its own loop pass, and every listener gets two sends with half the messages: on
    /// loopback a send costs the receiver's whole TCP path too, so messages per send decide a fan-out's
    /// rate (docs/BENCHMARKS.md, ws.fanout).
    private func awaitCommittingWritesBeforeFanOut() {
        guard webSocketsToFlush.count + streamsToFlush.count >= Self.fanOutSocketsMin, handler.hasWritesCommitting else { return }
        let deadline = Date(timeIntervalSinceNow: Self.fanOutHoldSeconds)
        while handler.hasWritesCommitting, Date() < deadline, executor.waitForWork(until: deadline) {
            if drainInbox() { return }
        }
    }

    private func runLoop() {
        loopPthread = pthread_self()
        precondition(uv_loop_init(loop) == 0, "uv_loop_init failed")
        let selfPointer = Unmanaged.passUnretained(self).toOpaque()
        wakeup.pointee.data = selfPointer
        uv_async_init(loop, wakeup) { handle in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<HTTPServerTransport>.fromOpaque(data).takeUnretainedValue().drainInbox()
        }
        timer.pointee.data = selfPointer
        uv_timer_init(loop, timer)
        iterationCounter.pointee.data = selfPointer
        uv_prepare_init(loop, iterationCounter)
        uv_prepare_start(iterationCounter) { handle in
            guard let data = handle?.pointee.data else { return }
            let transport = Unmanaged<HTTPServerTransport>.fromOpaque(data).takeUnretainedValue()
            transport.loopIteration &+= 1
            transport.awaitCommittingWritesBeforeFanOut()
            transport.flushWebSockets()
        }
        let tick = UInt64(configuration.tickIntervalMilliseconds)
        uv_timer_start(timer, { handle in
            guard let data = handle?.pointee.data else { return }
            let transport = Unmanaged<HTTPServerTransport>.fromOpaque(data).takeUnretainedValue()
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            transport.handler.tick(nowMilliseconds: now)
            transport.checkWebSockets(now: now)
        }, tick, tick)

        guard createContext() else {
            uv_close(UnsafeMutableRawPointer(wakeup).assumingMemoryBound(to: uv_handle_t.self), nil)
            uv_close(UnsafeMutableRawPointer(timer).assumingMemoryBound(to: uv_handle_t.self), nil)
            uv_close(UnsafeMutableRawPointer(iterationCounter).assumingMemoryBound(to: uv_handle_t.self), nil)
            uv_run(loop, UV_RUN_DEFAULT)
            uv_loop_close(loop)
            started.signal()
            ended.signal()
            return
        }
        executor.attach(wakeup)
        handler.loopStarted(executor: executor)
        started.signal()

        uv_run(loop, UV_RUN_DEFAULT)

        // Stopping: end streams, close every connection and the listener, let the handles close.
        handler.loopStopping()
        lws_context_destroy(context)
        context = nil
        connections.removeAll()
        webSockets.removeAll()
        uv_close(UnsafeMutableRawPointer(wakeup).assumingMemoryBound(to: uv_handle_t.self), nil)
        uv_close(UnsafeMutableRawPointer(timer).assumingMemoryBound(to: uv_handle_t.self), nil)
        uv_close(UnsafeMutableRawPointer(iterationCounter).assumingMemoryBound(to: uv_handle_t.self), nil)
        for _ in 0..<100 where uv_run(loop, UV_RUN_NOWAIT) != 0 {}
        uv_loop_close(loop)
        ended.signal()
    }

    private func createContext() -> Bool {
        protocols[0] = lws_protocols()
        protocols[0].name = UnsafePointer(strdup("http"))
        protocols[0].callback = { wsi, reason, _, input, length in
            guard let wsi, let owner = CHearthLWS_contextUser(wsi) else { return 0 }
            let transport = Unmanaged<HTTPServerTransport>.fromOpaque(owner).takeUnretainedValue()
            let outer = transport.callbackWSI
            transport.callbackWSI = wsi
            defer { transport.callbackWSI = outer }
            return transport.callback(wsi, reason, input, length)
        }
        // WebSockets receive into a 4 KiB buffer per connection (idle realtime clients are most of them);
        // sends go out in packets of up to 64 KiB.
        protocols[0].rx_buffer_size = 4096
        protocols[0].tx_packet_size = 64 * 1024
        protocols[1] = lws_protocols()

        var info = lws_context_creation_info()
        info.port = Int32(configuration.port)
        // lws keeps pointers to these strings for the context's life: they are never freed (a few bytes, once).
        info.iface = UnsafePointer(strdup(configuration.host))
        info.protocols = UnsafePointer(protocols)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.options = UInt64(LWS_SERVER_OPTION_LIBUV) | UInt64(LWS_SERVER_OPTION_UV_NO_SIGSEGV_SIGFPE_SPIN)
            | UInt64(LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND) | UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
        if let certificate = configuration.certificatePath, let key = configuration.privateKeyPath {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.ssl_cert_filepath = UnsafePointer(strdup(certificate))
            info.ssl_private_key_filepath = UnsafePointer(strdup(key))
            // HTTP/1.1 only: Debian's lws offers h2 by ALPN, and curl and browsers take it, but the
            // response path here writes HTTP/1 headers itself (measured: curl got an empty reply).
            info.alpn = UnsafePointer(strdup("http/1.1"))
        }
        info.timeout_secs = UInt32(configuration.stateTimeoutSeconds)
        info.keepalive_timeout = Int32(configuration.keepAliveTimeoutSeconds)
        info.max_http_header_data = UInt16(ServerLimits.requestHeadBufferBytes)
        info.token_limits = UnsafePointer(Self.tokenLimits)
        info.max_http_header_pool = 1024
        info.count_threads = 1
        info.pt_serv_buf_size = 64 * 1024
        let loops = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
        loops[0] = UnsafeMutableRawPointer(loop)
        info.foreign_loops = loops
        // HEARTH_LWS_LOG=31 (errors to debug) shows lws's own trace when a connection misbehaves.
        let logLevel = ProcessInfo.processInfo.environment["HEARTH_LWS_LOG"].flatMap { Int32($0) } ?? Int32(LLL_ERR)
        lws_set_log_level(logLevel, nil)
        context = lws_create_context(&info)
        loops.deallocate()
        guard let context else {
            startError = "could not listen on \(configuration.host):\(configuration.port): the port is in use, "
                + "the address is not this machine's, or the libuv event library of libwebsockets "
                + "(Debian package libwebsockets-evlib-uv) is missing"
            return false
        }
        // lws 4.1 returns a context even when the listening socket could not be bound (the default vhost
        // is then missing): that is a failed start, not a server that answers nobody.
        // The context is left undestroyed (a few kB, once, in a process that is failing to start): with
        // a foreign libuv loop lws unloads its event-library plugin before the loop has run the handle
        // closes that destroying schedules, which crashes.
        guard let vhost = lws_get_vhost_by_name(context, "default") else {
            startError = "could not listen on \(configuration.host):\(configuration.port): the port is in use "
                + "(another hearth serve?) or the address is not this machine's; choose another with --port"
            return false
        }
        boundPort = Int(lws_get_vhost_listen_port(vhost))
        return true
    }

    static let trace = ProcessInfo.processInfo.environment["HEARTH_TRACE_LWS"] != nil

    /// lws's per-header length limits: one byte over Hearth's bounds (``ServerLimits/requestTargetBytesMax``
    /// for the request target's tokens, ``ServerLimits/requestHeaderBytesMax`` for every other header).
    /// lws cuts a longer value at its limit and reads on, so the request still reaches
    /// ``Connection/beginRequest(uri:length:)``, which answers 414 or 431 instead of the connection
    /// closing unanswered (what lws does when its header buffer fills). Allocated once and never freed:
    /// the context keeps the pointer.
    nonisolated(unsafe) private static let tokenLimits: UnsafeMutablePointer<lws_token_limits> = {  // written once, then only read by lws
        let limits = UnsafeMutablePointer<lws_token_limits>.allocate(capacity: 1)
        limits.initialize(to: lws_token_limits())
        let count = Int(WSI_TOKEN_COUNT.rawValue)
        withUnsafeMutableBytes(of: &limits.pointee.token_limit) { raw in
            let slots = raw.bindMemory(to: UInt16.self)
            for token in 0..<count {
                let bound = RequestHead.isTargetToken(UInt32(token)) ? ServerLimits.requestTargetBytesMax : ServerLimits.requestHeaderBytesMax
                slots[token] = UInt16(bound + 1)
            }
        }
        return limits
    }()

    /// Runs what other threads handed over; true once the transport is stopping.
    @discardableResult
    private func drainInbox() -> Bool {
        let (work, stopping) = executor.take()
        for item in work { item() }
        if stopping {
            uv_timer_stop(timer)
            uv_stop(loop)
        }
        return stopping
    }

    // MARK: libwebsockets callbacks (loop thread)

    private func callback(
        _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?, _ length: Int
    ) -> Int32 {
        if Self.trace { FileHandle.standardError.write(Data("lws reason \(reason.rawValue) wsi \(wsi) known \(connections.count)\n".utf8)) }
        switch reason {
        case LWS_CALLBACK_HTTP:
            let connection = connections[wsi] ?? {
                let created = Connection(wsi: wsi, transport: self)
                connections[wsi] = created
                return created
            }()
            return connection.beginRequest(uri: input, length: length)
        case LWS_CALLBACK_HTTP_BODY:
            guard let connection = connections[wsi], let input else { return -1 }
            return connection.receiveBody(UnsafeRawBufferPointer(start: input, count: length))
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            guard let connection = connections[wsi] else { return -1 }
            return connection.bodyComplete()
        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let connection = connections[wsi] else { return 0 }
            return connection.writable()
        case LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_WSI_DESTROY:
            if let connection = connections.removeValue(forKey: wsi) { connection.closed() }
            upgrades[wsi] = nil
            if let socket = webSockets.removeValue(forKey: wsi) { socket.closed() }
            return 0
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi, kind: input)
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            // A WebSocket upgrade: only `/.ws`, only when the handler serves realtime sessions.
            guard let realtime = handler as? any RealtimeHandler else { return -1 }
            let path = Connection.header(WSI_TOKEN_GET_URI, wsi) ?? ""
            guard realtime.acceptsRealtime(path: path) else { return -1 }
            var request = HTTPRequest(method: .get, path: path, queryItems: Connection.queryItems(wsi) ?? [])
            for name in HTTPRequest.headerNames {
                if let value = Connection.header(name, wsi) { request.headers[name] = value }
            }
            upgrades[wsi] = request
            return 0
        case LWS_CALLBACK_ESTABLISHED:
            guard let realtime = handler as? any RealtimeHandler, let request = upgrades.removeValue(forKey: wsi) else {
                return -1
            }
            let socket = WebSocketConnection(wsi: wsi, transport: self, now: Self.now())
            webSockets[wsi] = socket
            socket.session = realtime.openRealtime(request, sink: socket)
            return 0
        case LWS_CALLBACK_RECEIVE:
            guard let socket = webSockets[wsi], let input else { return 0 }
            return socket.received(UnsafeRawBufferPointer(start: input, count: length), now: Self.now())
        case LWS_CALLBACK_RECEIVE_PONG:
            webSockets[wsi]?.heardPong(now: Self.now())
            return 0
        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let socket = webSockets[wsi] else { return 0 }
            return socket.writable()
        case LWS_CALLBACK_CLOSED:
            if let socket = webSockets.removeValue(forKey: wsi) { socket.closed() }
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, nil, input, length)
        }
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// An `Upgrade:` request, before lws acts on it (lws passes the header's value as `kind`).
    ///
    /// `h2c` (RFC 9113 §3.1 lets a server ignore it): lws 4.1 would switch any such request to HTTP/2,
    /// which this transport does not serve, and the client would get `101` and then nothing. lws compares
    /// `kind` again after this callback, in its own header buffer (`kind` points into it), so overwriting
    /// its first byte makes lws see no upgrade it knows and serve the request as HTTP/1.1. lws offers no
    /// option for this; Tests/compat/test_hostile.py checks it with `curl --http2`.
    ///
    /// `websocket`: checked here, where an HTTP answer can still be written, instead of lws closing the
    /// connection without one when a header is missing or the path is not served.
    private func confirmUpgrade(_ wsi: OpaquePointer, kind: UnsafeMutableRawPointer?) -> Int32 {
        guard let kind else { return 0 }
        let name = String(cString: kind.assumingMemoryBound(to: CChar.self)).lowercased()
        if name == "h2c" {
            kind.storeBytes(of: UInt8(ascii: "-"), as: UInt8.self)
            return 0
        }
        guard name == "websocket" else { return 0 }
        let path = Connection.header(WSI_TOKEN_GET_URI, wsi) ?? ""
        let refusal: (Int, String)?
        if !((handler as? any RealtimeHandler)?.acceptsRealtime(path: path) ?? false) {
            refusal = (404, "Not found: realtime WebSocket connections are served at /.ws")
        } else {
            refusal = RequestHead.webSocketUpgradeRefusal(
                key: Connection.header(WSI_TOKEN_KEY, wsi), host: Connection.header(WSI_TOKEN_HOST, wsi),
                connection: Connection.header(WSI_TOKEN_CONNECTION, wsi),
                subprotocol: Connection.header(WSI_TOKEN_PROTOCOL, wsi))
        }
        guard let (status, message) = refusal else { return 0 }
        let connection = Connection(wsi: wsi, transport: self)
        connections[wsi] = connection
        return connection.refuse(status: status, message: message)
    }

    /// WebSocket liveness (§1.7): a protocol ping after `webSocketPingSeconds` of silence, closed after
    /// `webSocketTimeoutSeconds` (which runs the session's onDisconnect operations).
    func checkWebSockets(now: Int64) {
        for socket in webSockets.values {
            // Soft limit over time (STYLE §3.9): over a quarter of the budget for too long is a slow reader.
            if socket.isOverSoftLimit {
                if socket.overSoftLimitSince == 0 { socket.overSoftLimitSince = now }
                if now - socket.overSoftLimitSince > Int64(configuration.webSocketSoftLimitSeconds) * 1000 {
                    socket.close(reason: "outbound queue over its soft limit for too long: client too slow", immediately: true)
                    continue
                }
            } else {
                socket.overSoftLimitSince = 0
            }
            let silent = now - socket.lastHeard
            if silent > Int64(configuration.webSocketTimeoutSeconds) * 1000 {
                socket.close(reason: "no traffic for \(configuration.webSocketTimeoutSeconds) s", immediately: true)
            } else if silent > Int64(configuration.webSocketPingSeconds) * 1000 {
                socket.sendPing()
            }
        }
    }

    // MARK: Connection

    /// One HTTP connection: its request being read and its response being written. Loop thread only.
    final class Connection: HTTPResponder {
        private enum Phase {
            case idle
            case readingBody
            case handling
            case responding(complete: Bool)
            case streaming
            /// The last answer is handed to lws; the connection ends without reading another request.
            case closing
        }

        let wsi: OpaquePointer
        unowned let transport: HTTPServerTransport
        private var phase = Phase.idle
        private var request = HTTPRequest(method: .get, path: "/")
        private var bodyTooLarge = false
        /// The decoder of a `Transfer-Encoding: chunked` body being read.
        private var chunkedBody: ChunkedBodyDecoder?
        private var head: (status: Int, headers: [(String, String)], contentLength: Int?)?
        private var outbound: [UInt8] = []
        private var outboundStart = 0
        private var closeWhenWritten = false
        private var streamEnded = false
        private var isClosed = false
        var onClose: (() -> Void)?

        private var budget: OutboundBudget

        init(wsi: OpaquePointer, transport: HTTPServerTransport) {
            self.wsi = wsi
            self.transport = transport
            budget = OutboundBudget(limitBytes: transport.configuration.outboundBufferBytesMax)
        }

        var queuedByteCount: Int { outbound.count - outboundStart }

        func beginRequest(uri: UnsafeMutableRawPointer?, length: Int) -> Int32 {
            // A request while the previous one is unanswered can only come from bytes the client sent
            // ahead (pipelining): lws parsed them out of its buffer. Hearth answers one request at a time
            // per connection, so this connection ends here (see ``PipelinedRequests``).
            guard case .idle = phase else { return PipelinedRequests.refuse }
            var uriPointer: UnsafeMutablePointer<CChar>?
            var uriLength: Int32 = 0
            let methodIndex = lws_http_get_uri_and_method(wsi, &uriPointer, &uriLength)
            let method: HTTPRequest.Method
            switch Int(methodIndex) {
            case LWSHUMETH_GET: method = .get
            case LWSHUMETH_POST: method = .post
            case LWSHUMETH_PUT: method = .put
            case LWSHUMETH_PATCH: method = .patch
            case LWSHUMETH_DELETE: method = .delete
            case LWSHUMETH_OPTIONS: method = .options
            case LWSHUMETH_HEAD: method = .head
            default: return -1
            }
            request = HTTPRequest(method: method, path: "/")
            bodyTooLarge = false
            chunkedBody = nil
            head = nil
            outbound = []
            outboundStart = 0
            let target = uri.map { UnsafeRawBufferPointer(start: $0, count: length) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
            if let (status, message) = RequestHead.sizeRefusal(wsi) { return refuse(status: status, message: message) }
            // lws decodes `%XX` in the path: a NUL (which lws lets through right after a `/`) or bytes that
            // are not UTF-8 would otherwise reach the handler as a different path than the client meant.
            guard !target.contains(0) else { return refuse(status: 400, message: "The request path contains a NUL byte (%00)") }
            guard let path = target.isEmpty ? "/" : String(validating: target, as: UTF8.self) else {
                return refuse(status: 400, message: "The request path is not valid UTF-8 once percent-decoded")
            }
            request.path = path
            if transport.handler.needsPeerAddress(path: path) { request.remoteAddress = peerAddress() }
            guard let items = queryItems() else {
                return refuse(status: 400, message: "A query parameter is not valid UTF-8 once percent-decoded")
            }
            request.queryItems = items
            request.headers.reserveCapacity(8)  // grown one insert at a time it rehashed several times
            for (name, token) in Self.headerTokens {
                if let value = header(name, token: token) { request.headers[name] = value }
            }
            let transferEncoding = header("transfer-encoding", token: WSI_TOKEN_HTTP_TRANSFER_ENCODING)
            switch RequestFraming.decide(
                method: method, contentLength: request.headers["content-length"], transferEncoding: transferEncoding)
            {
            case .failure(let refusal):
                return refuse(status: refusal.status, message: refusal.message)
            case .success(.none):
                break
            case .success(.contentLength(let declared)):
                phase = .readingBody
                if declared > transport.configuration.requestBodyBytesMax {
                    bodyTooLarge = true
                    rejectOversizeBody()
                }
                return callbackResult
            case .success(.chunked):
                // lws reads no chunked framing itself (it expects a body of 100 MiB and then discards the
                // rest): the body is decoded here, and the connection ends after the answer.
                chunkedBody = ChunkedBodyDecoder(bodyBytesMax: transport.configuration.requestBodyBytesMax)
                closeWhenWritten = true
                phase = .readingBody
                return callbackResult
            case .success(.emptyThenClose):
                // lws assumes such a request has a body it will skip; the connection cannot carry another.
                closeWhenWritten = true
            }
            dispatch()
            return callbackResult
        }

        /// Answers a request refused before the handler sees it, in the handler's error shape, and
        /// closes the connection (nothing after a refused head can be trusted to start a request).
        func refuse(status: Int, message: String) -> Int32 {
            closeWhenWritten = true
            phase = .handling
            respond(transport.handler.refusal(status: status, message: message))
            return callbackResult
        }

        private func rejectOversizeBody() {
            closeWhenWritten = true
            let limit = transport.configuration.requestBodyBytesMax
            respond(transport.handler.refusal(status: 413, message: "Request body is larger than the limit of \(limit) bytes"))
        }

        func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int32 {
            guard case .readingBody = phase else { return 0 }
            if chunkedBody != nil { return receiveChunks(bytes) }
            if request.body.isEmpty, PipelinedRequests.isMisreadBody(bytes, method: request.method) {
                return PipelinedRequests.refuse
            }
            if request.body.count + bytes.count > transport.configuration.requestBodyBytesMax {
                bodyTooLarge = true
                rejectOversizeBody()
                return callbackResult
            }
            request.body.append(contentsOf: bytes)
            return 0
        }

        /// The bytes of a chunked body; the request is handled once its last chunk is read (lws, which
        /// expects 100 MiB, never reports the body complete). Bytes after it are a pipelined request,
        /// which this connection, closing after the answer, does not serve.
        private func receiveChunks(_ bytes: UnsafeRawBufferPointer) -> Int32 {
            guard var decoder = chunkedBody else { return 0 }
            let state: ChunkedBodyDecoder.State
            do { state = try decoder.receive(bytes) } catch {
                chunkedBody = nil
                return refuse(status: error.status, message: error.message)
            }
            chunkedBody = decoder
            guard case .complete = state else { return 0 }
            request.body = decoder.body
            chunkedBody = nil
            inBodyCallback = true
            defer { inBodyCallback = false }
            dispatch()
            return callbackResult
        }

        /// True while a body callback runs: an answer given then is written at once but its transaction
        /// completes from the writable callback, never inside the body callback (where lws, serving a
        /// pipelined request, would loop forever on its buffer).
        private var inBodyCallback = false
        /// Repeated body-completion callbacks in loop iteration `repeatedCompletionIteration`.
        private var repeatedCompletions = 0
        private var repeatedCompletionIteration: UInt64 = 0
        private var completionDeferred = false

        private func finishTransactionAfterWrite() {
            if inBodyCallback {
                completionDeferred = true
                lws_callback_on_writable(wsi)
                return
            }
            if completeTransaction() != 0 { endConnection() }
        }

        func bodyComplete() -> Int32 {
            guard case .readingBody = phase else {
                // lws calls this again for every pass over bytes buffered after a complete body: the client
                // pipelined behind a request with a body. Passes from lws's service of its buffer come a
                // few per loop iteration: wait for the answer (`lws_rx_flow_control` does not stop them and
                // stops the writable callback too); then lws reads the next request. When this request
                // itself came out of the buffer, the passes come from lws_http_action's loop over it, which
                // repeats forever within one iteration: end the connection, unanswered (see
                // ``PipelinedRequests``).
                if repeatedCompletionIteration != transport.loopIteration {
                    repeatedCompletionIteration = transport.loopIteration
                    repeatedCompletions = 0
                }
                repeatedCompletions += 1
                if repeatedCompletions > PipelinedRequests.bufferPassesPerIterationMax { return PipelinedRequests.refuse }
                return callbackResult
            }
            inBodyCallback = true
            defer { inBodyCallback = false }
            dispatch()
            return callbackResult
        }

        private func dispatch() {
            phase = .handling
            transport.handler.handle(request, responder: self)
        }

        /// Nil when a name or value is not UTF-8 once decoded.
        private func queryItems() -> [(name: String, value: String)]? {
            Self.queryItems(wsi, scratch: transport.headerScratch)
        }

        /// The client's IP address as text.
        private func peerAddress() -> String? {
            let scratch = transport.headerScratch
            guard lws_get_peer_simple(wsi, scratch.baseAddress, Int(scratch.count)) != nil else { return nil }
            let text = String(cString: scratch.baseAddress!)
            return text.isEmpty ? nil : text
        }

        /// The query's `name=value` items, decoded by lws, each split at its first `=`; nil when one is
        /// not UTF-8. Copied through `scratch` when it is large enough (the per-request path), else
        /// through a buffer of their own.
        static func queryItems(
            _ wsi: OpaquePointer, scratch: UnsafeMutableBufferPointer<CChar>? = nil
        ) -> [(name: String, value: String)]? {
            var items: [(name: String, value: String)] = []
            var valid = true
            let total = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
            guard total > 0 else { return items }
            func readFragments(_ buffer: UnsafeMutableBufferPointer<CChar>) {
                var index: Int32 = 0
                while true {
                    let copied = lws_hdr_copy_fragment(wsi, buffer.baseAddress, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
                    if copied < 0 { break }
                    let bytes = UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(copied))
                    let equals = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.count
                    let name = String(validating: UnsafeRawBufferPointer(rebasing: bytes[..<equals]), as: UTF8.self)
                    let value = equals < bytes.count
                        ? String(validating: UnsafeRawBufferPointer(rebasing: bytes[(equals + 1)...]), as: UTF8.self) : ""
                    if let name, let value { items.append((name, value)) } else { valid = false }
                    index += 1
                }
            }
            if let scratch, scratch.count >= total + 2 {
                readFragments(scratch)
            } else {
                var buffer = [CChar](repeating: 0, count: total + 2)
                buffer.withUnsafeMutableBufferPointer { readFragments($0) }
            }
            return valid ? items : nil
        }

        /// Every header of ``HTTPRequest/headerNames`` with lws's token for it, or nil (then it is looked up
        /// by name, with the colon lws expects). Built once: no hashing per request.
        private static let headerTokens: [(name: String, token: lws_token_indexes?)] = HTTPRequest.headerNames.map { name in
            let known: [(String, lws_token_indexes)] = [
                ("host", WSI_TOKEN_HOST), ("authorization", WSI_TOKEN_HTTP_AUTHORIZATION), ("accept", WSI_TOKEN_HTTP_ACCEPT),
                ("content-type", WSI_TOKEN_HTTP_CONTENT_TYPE), ("content-length", WSI_TOKEN_HTTP_CONTENT_LENGTH),
                ("if-match", WSI_TOKEN_HTTP_IF_MATCH), ("if-none-match", WSI_TOKEN_HTTP_IF_NONE_MATCH),
                ("origin", WSI_TOKEN_ORIGIN), ("access-control-request-headers", WSI_TOKEN_HTTP_AC_REQUEST_HEADERS),
                ("x-forwarded-for", WSI_TOKEN_X_FORWARDED_FOR),
            ]
            return (name, known.first { $0.0 == name }?.1)
        }
        private static let customHeaderKeys: [String: [CChar]] = Dictionary(
            uniqueKeysWithValues: HTTPRequest.headerNames.map { ($0, Array(($0 + ":").utf8CString.dropLast())) })

        /// A header by lws token, for the WebSocket upgrade filter, which runs before a `Connection`
        /// exists (rare: allocates its own buffer).
        static func header(_ token: lws_token_indexes, _ wsi: OpaquePointer) -> String? {
            let length = Int(lws_hdr_total_length(wsi, token))
            guard length > 0 else { return nil }
            var buffer = [CChar](repeating: 0, count: length + 1)
            guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
            return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// A header by name, for the upgrade filter (see above).
        static func header(_ name: String, _ wsi: OpaquePointer) -> String? {
            if let token = headerTokens.first(where: { $0.name == name })?.token { return header(token, wsi) }
            let key = Array((name + ":").utf8CString.dropLast())
            let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.count)))
            guard length >= 0 else { return nil }
            var buffer = [CChar](repeating: 0, count: length + 1)
            guard lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, Int32(key.count)) >= 0 else { return nil }
            return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// A header's value copied straight from lws into a String through the loop's scratch buffer,
        /// nil when absent (the per-request path).
        private func header(_ name: String, token: lws_token_indexes?) -> String? {
            let scratch = transport.headerScratch
            if let token {
                let length = Int(lws_hdr_total_length(wsi, token))
                guard length > 0, length < scratch.count else { return nil }
                let copied = lws_hdr_copy(wsi, scratch.baseAddress, Int32(scratch.count), token)
                guard copied >= 0 else { return nil }
                return String(decoding: UnsafeRawBufferPointer(start: scratch.baseAddress, count: Int(copied)), as: UTF8.self)
            }
            guard let key = Self.customHeaderKeys[name] else { return nil }
            let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.count)))
            guard length >= 0, length < scratch.count else { return nil }
            guard lws_hdr_custom_copy(wsi, scratch.baseAddress, Int32(scratch.count), key, Int32(key.count)) >= 0 else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: scratch.baseAddress, count: length), as: UTF8.self)
        }

        // MARK: HTTPResponder

        func respond(_ response: HTTPResponse) {
            guard !isClosed, head == nil, !headSent else { return }
            var response = response
            if closeWhenWritten, !response.headers.contains(where: { $0.0 == "connection" }) {
                response.headers.append(("connection", "close"))
            }
            if respondDirectly(response) { return }
            head = (response.status, response.headers, response.body.count)
            outbound = response.body
            outboundStart = 0
            phase = .responding(complete: true)
            lws_callback_on_writable(wsi)
        }

        /// Writes a small complete response now, head and body in one write, instead of asking lws for a
        /// writable callback first: that round trip cost four epoll_ctl calls, an epoll_wait and a second
        /// send per request. lws keeps whatever the socket does not take and finishes it itself (and
        /// defers the end of the transaction until then). Returns false, having written nothing, when the
        /// response is too large for one staged write; then the writable path sends it.
        private func respondDirectly(_ response: HTTPResponse) -> Bool {
            let pre = CHearthLWS_pre()
            let raw = transport.writeScratch
            guard response.body.count <= raw.count - pre - 8192 else { return false }
            let start = raw.baseAddress! + pre
            let headEnd = start + 8192
            var cursor: UnsafeMutablePointer<UInt8>? = start
            let contentType = response.headers.first { $0.0 == "content-type" }?.1
            if lws_add_http_common_headers(wsi, UInt32(response.status), contentType, lws_filepos_t(response.body.count), &cursor, headEnd) != 0 {
                return false
            }
            for (name, value) in response.headers where name != "content-type" {
                if !Self.appendHeader(name, value, at: &cursor, end: headEnd) { return false }
            }
            if lws_finalize_http_header(wsi, &cursor, headEnd) != 0 { return false }
            guard var end = cursor else { return false }
            response.body.withUnsafeBufferPointer { body in
                if let base = body.baseAddress { end.update(from: base, count: body.count) }
            }
            end += response.body.count
            let total = end - start
            phase = .responding(complete: true)
            if lws_write(wsi, start, total, LWS_WRITE_HTTP_HEADERS) < 0 {
                endConnection()
                return true
            }
            finishTransactionAfterWrite()
            return true
        }

        /// `name: value\r\n` at `cursor`, as lws_add_http_header_by_name writes it for HTTP/1 (the only
        /// version served), without building `name + ":"` as a new String for each header.
        private static func appendHeader(
            _ name: String, _ value: String, at cursor: inout UnsafeMutablePointer<UInt8>?, end: UnsafeMutablePointer<UInt8>
        ) -> Bool {
            guard var out = cursor, end - out >= name.utf8.count + value.utf8.count + 4 else { return false }
            copyUTF8(name, to: &out)
            out[0] = UInt8(ascii: ":")
            out[1] = UInt8(ascii: " ")
            out += 2
            copyUTF8(value, to: &out)
            out[0] = 13
            out[1] = 10
            cursor = out + 2
            return true
        }

        /// `text`'s UTF-8 bytes at `out`, one copy (a byte-by-byte loop over `utf8` cost ~4k instructions
        /// per response's headers, measured with callgrind).
        private static func copyUTF8(_ text: String, to out: inout UnsafeMutablePointer<UInt8>) {
            var text = text
            let count = text.withUTF8 { bytes in
                if let base = bytes.baseAddress { out.update(from: base, count: bytes.count) }
                return bytes.count
            }
            out += count
        }

        func startStream(status: Int, headers: [(String, String)]) {
            guard !isClosed, head == nil, !headSent else { return }
            head = (status, headers + [("transfer-encoding", "chunked")], nil)
            phase = .streaming
            lws_callback_on_writable(wsi)
        }

        func send(_ bytes: [UInt8]) -> Bool {
            guard !isClosed, !streamEnded else { return false }
            if budget.isOver(queuedBytes: queuedByteCount) { return false }
            budget.willQueue(messageBytes: bytes.count, queuedBytes: queuedByteCount)
            appendChunk(bytes)
            return true
        }

        func abort() {
            guard !isClosed else { return }
            onClose = nil
            streamEnded = true
            head = nil
            outbound = []
            outboundStart = 0
            phase = .closing
            // Not from inside this connection's own callback (lws would use the freed wsi on return):
            // then the kill happens on lws's next pass, and the writable callback, if it comes, ends it.
            if transport.callbackWSI == wsi {
                lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
                lws_callback_on_writable(wsi)
                return
            }
            // A stalled reader never makes the socket writable again: closed now, whatever lws still holds.
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_SYNC)
        }

        func sendFinal(_ bytes: [UInt8]) {
            guard !isClosed, !streamEnded else { return }
            appendChunk(bytes)
        }

        private func appendChunk(_ bytes: [UInt8]) {
            guard !bytes.isEmpty else { return }
            if outboundStart > 0 && outboundStart == outbound.count {
                outbound.removeAll(keepingCapacity: true)
                outboundStart = 0
            }
            outbound.append(contentsOf: Array(String(bytes.count, radix: 16).utf8))
            outbound.append(contentsOf: [13, 10])
            outbound.append(contentsOf: bytes)
            outbound.append(contentsOf: [13, 10])
            // A live stream's events go out before the loop next polls, all that queued in this
            // iteration in one write, without a writable-callback round trip per event (two epoll_ctl
            // and a wake-up each: most of a fan-out's cost, as ws.fanout measured for WebSockets).
            if isStreaming, headSent, head == nil {
                if !flushScheduled {
                    flushScheduled = true
                    transport.streamsToFlush.append(self)
                }
            } else {
                lws_callback_on_writable(wsi)
            }
        }

        private var flushScheduled = false

        /// Writes up to one chunk of what is queued now; lws finishes a partial send itself, and the rest
        /// goes out from writable callbacks.
        func flushBeforePoll() {
            flushScheduled = false
            guard !isClosed, isStreaming, head == nil, queuedByteCount > 0 else { return }
            if lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                return
            }
            let pre = CHearthLWS_pre()
            let count = min(queuedByteCount, Self.chunkBytesMax)
            let raw = transport.writeScratch
            outbound.withUnsafeBufferPointer { source in
                (raw.baseAddress! + pre).update(from: source.baseAddress! + outboundStart, count: count)
            }
            if lws_write(wsi, raw.baseAddress! + pre, count, LWS_WRITE_HTTP) < 0 {
                lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_SYNC)
                return
            }
            outboundStart += count
            if outboundStart == outbound.count {
                outbound.removeAll(keepingCapacity: outbound.capacity <= 1 << 20)
                outboundStart = 0
            } else {
                lws_callback_on_writable(wsi)
            }
        }

        func finish() {
            guard !isClosed, !streamEnded else { return }
            streamEnded = true
            outbound.append(contentsOf: Array("0\r\n\r\n".utf8))
            lws_callback_on_writable(wsi)
        }

        func closed() {
            guard !isClosed else { return }
            isClosed = true
            let callback = onClose
            onClose = nil
            callback?()
        }

        // MARK: Writing

        private static let chunkBytesMax = 64 * 1024

        func writable() -> Int32 {
            if isClosed { return -1 }
            if case .closing = phase, head == nil, queuedByteCount == 0 { return -1 }
            if completionDeferred {
                completionDeferred = false
                return completeTransaction()
            }
            let pre = CHearthLWS_pre()
            if let pending = head {
                head = nil
                // Mark as sent: `head` stays non-nil-like through `headSent` so respond() is not re-entered.
                headSent = true
                let raw = transport.writeScratch
                let result: Int32 = {
                    let start = raw.baseAddress! + pre
                    let end = raw.baseAddress! + min(raw.count, pre + 8192)
                    var cursor: UnsafeMutablePointer<UInt8>? = start
                    let contentType = pending.headers.first { $0.0 == "content-type" }?.1
                    let length = pending.contentLength.map { lws_filepos_t($0) } ?? CHearthLWS_noContentLength()
                    if lws_add_http_common_headers(wsi, UInt32(pending.status), contentType, length, &cursor, end) != 0 {
                        return -1
                    }
                    for (name, value) in pending.headers where name != "content-type" {
                        if !Self.appendHeader(name, value, at: &cursor, end: end) {
                            return -1
                        }
                    }
                    if lws_finalize_write_http_header(wsi, start, &cursor, end) != 0 { return -1 }
                    return 0
                }()
                if result != 0 { return -1 }
                // A stream never reads another request: give its header table back to lws's pool
                // (max_http_header_pool), which would otherwise cap open streams at the pool's size.
                // Nor is it subject to the per-state timeout (stateTimeoutSeconds), which would end it
                // after that many seconds however lively it is.
                if isStreaming {
                    _ = lws_http_headers_detach(wsi)
                    lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
                }
                if queuedByteCount > 0 || isStreaming {
                    lws_callback_on_writable(wsi)
                    return 0
                }
                return completeTransaction()
            }
            if queuedByteCount > 0 {
                let count = min(queuedByteCount, Self.chunkBytesMax)
                let last = count == queuedByteCount
                let final = last && !isStreaming
                let raw = transport.writeScratch
                outbound.withUnsafeBufferPointer { source in
                    (raw.baseAddress! + pre).update(from: source.baseAddress! + outboundStart, count: count)
                }
                let written = lws_write(wsi, raw.baseAddress! + pre, count, final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
                if written < 0 { return -1 }
                outboundStart += count
                if outboundStart == outbound.count {
                    outbound.removeAll(keepingCapacity: outbound.capacity <= 1 << 20)
                    outboundStart = 0
                }
                if !last || lws_partial_buffered(wsi) != 0 {
                    lws_callback_on_writable(wsi)
                    return 0
                }
                if isStreaming {
                    return streamEnded ? -1 : 0
                }
                return completeTransaction()
            }
            if isStreaming && streamEnded { return -1 }
            return 0
        }

        private var headSent = false

        private var isStreaming: Bool {
            if case .streaming = phase { return true }
            return false
        }

        /// Closes the connection once what lws holds of the answer is sent. Inside this connection's own
        /// callback that is the callback's result (see ``callbackResult``); elsewhere it happens now, or
        /// from the writable callback when lws still holds part of the answer. (An lws timeout of
        /// `LWS_TO_KILL_ASYNC` is no substitute: on the libuv loop it fires only when lws's timer next
        /// runs, which can be minutes away.)
        private func endConnection() {
            phase = .closing
            if transport.callbackWSI == wsi { return }
            if lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                return
            }
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_SYNC)
        }

        /// What a request callback returns once it has handed the request over: -1 (lws closes the
        /// connection) when the answer, already given, ended the connection.
        private var callbackResult: Int32 {
            if case .closing = phase { return -1 }
            return 0
        }

        private func completeTransaction() -> Int32 {
            headSent = false
            request = HTTPRequest(method: .get, path: "/")
            if closeWhenWritten {
                phase = .closing
                return -1
            }
            phase = .idle
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        }
    }
}

/// The loop's inbox: work handed over from other threads, run in one pass per wake-up.
public final class Inbox: LoopExecutor, @unchecked Sendable {
    // Protected by `lock`.
    private let lock = NSCondition()
    private var work: [@Sendable () -> Void] = []
    private var stopping = false
    private var stopped = false
    /// The loop's `uv_async_t`; set once before any other thread can call `execute`.
    private var wakeup: UnsafeMutablePointer<uv_async_t>?

    func attach(_ wakeup: UnsafeMutablePointer<uv_async_t>) {
        lock.lock()
        self.wakeup = wakeup
        lock.unlock()
    }

    public func execute(_ item: @escaping @Sendable () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        work.append(item)
        // uv_async_send is the one libuv call safe from any thread; calls coalesce into one wake-up.
        if work.count == 1, let wakeup { uv_async_send(wakeup) }
        if work.count == 1 { lock.signal() }
    }

    /// Waits (on the loop thread, which is then not polling) until there is work or `deadline` passes;
    /// true when there is work to take.
    func waitForWork(until deadline: Date) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        while work.isEmpty && !stopping {
            if !lock.wait(until: deadline) { break }
        }
        return !work.isEmpty || stopping
    }

    func stop() {
        lock.lock()
        defer { lock.unlock() }
        stopping = true
        if let wakeup { uv_async_send(wakeup) }
        lock.signal()  // a fan-out hold waiting for work ends now
    }

    func take() -> ([@Sendable () -> Void], Bool) {
        lock.lock()
        defer { lock.unlock() }
        let taken = work
        work = []
        if stopping { stopped = true }
        return (taken, stopping)
    }
}
