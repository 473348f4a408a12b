public import HearthProtocol
internal import CLibWebSockets
import Foundation
import HearthSupport
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

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
///     let transport = HTTPServerTransport(configuration: .init(port: 9000), handler: server, webSocketHandler: server)
///     try transport.start()   // listening when this returns
///     transport.stop()        // from any thread; returns when the loop has ended
public final class HTTPServerTransport: @unchecked Sendable {
    public let configuration: TransportConfiguration
    /// What every response carries besides its own headers (``TransportConfiguration/responseHeaders``).
    let responseHeaders: [(String, String)]
    /// Called only on the loop thread.
    let handler: any HTTPHandler
    /// Where WebSocket upgrades go; nil refuses them all.
    let webSocketHandler: (any RealtimeHandler)?
    public let executor: Inbox

    // Loop-thread state (set up before the thread starts, torn down after it ends).
    private var loop: UnsafeMutablePointer<uv_loop_t>
    private var wakeup: UnsafeMutablePointer<uv_async_t>
    private var timer: UnsafeMutablePointer<uv_timer_t>
    /// Counts loop iterations (a prepare handle runs once before each poll): tells whether two lws
    /// callbacks came from one pass of lws over its input or from separate ones.
    private var iterationCounter: UnsafeMutablePointer<uv_prepare_t>
    var loopIteration: UInt64 = 0
    /// The request bodies in flight on every connection (loop thread only).
    lazy var bodyBudget = RequestBodyBudget(bytesMax: configuration.requestBodyBytesInFlightMax)
    /// WebSockets given frames since the loop last polled: written once per iteration, before it polls
    /// (see ``WebSocketConnection/flushBeforePoll()``).
    var webSocketsToFlush: [WebSocketConnection] = []
    /// Event streams given events since the loop last polled, written the same way
    /// (``HTTPConnection/flushBeforePoll()``).
    var streamsToFlush: [HTTPConnection] = []
    private var context: OpaquePointer?
    private var protocols: UnsafeMutablePointer<lws_protocols>
    private var connections: [OpaquePointer: HTTPConnection] = [:]
    /// Upgraded WebSockets, and upgrade requests between the filter and the established callback.
    private var webSockets: [OpaquePointer: WebSocketConnection] = [:]
    private var upgrades: [OpaquePointer: HTTPRequest] = [:]
    /// The connection whose lws callback is running, if any: it may not be closed from inside, only by
    /// the callback returning -1.
    var callbackWSI: OpaquePointer?
    /// Loop-thread scratch, allocated once: header values are copied out of lws through `headerScratch`,
    /// and every write is staged in `writeScratch` (LWS_PRE bytes of room, then up to one chunk).
    let headerScratch = UnsafeMutableBufferPointer<CChar>.allocate(capacity: 16 * 1024 + 1)
    let writeScratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1024 + 64 * 1024)
    private var loopThread: Thread?
    private let started = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private var startError: String?
    /// Read by other threads only after `started`.
    public private(set) var boundPort = 0

    public init(configuration: TransportConfiguration, handler: any HTTPHandler, webSocketHandler: (any RealtimeHandler)? = nil) {
        self.configuration = configuration
        responseHeaders = configuration.responseHeaders
        self.handler = handler
        self.webSocketHandler = webSocketHandler
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
        loopThread = NamedThread.start("hearth.loop", stackSize: 8 << 20) { [self] in self.runLoop() }
        started.wait()
        if let startError { throw TransportError(description: startError) }
    }

    /// Stops accepting, ends streams, closes every connection and ends the loop thread. Any thread.
    public func stop() {
        executor.stop()
        ended.wait()
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
        guard webSocketsToFlush.count + streamsToFlush.count >= Self.fanOutSocketsMin, handler.hasOutputComing else { return }
        let deadline = Date(timeIntervalSinceNow: Self.fanOutHoldSeconds)
        while handler.hasOutputComing, Date() < deadline, executor.waitForWork(until: deadline) {
            if drainInbox() { return }
        }
    }

    private func runLoop() {
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
        handler.memoryBudgetAvailable(self)
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
    /// ``HTTPConnection/beginRequest(uri:length:)``, which answers 414 or 431 instead of the connection
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
        if Self.trace { configuration.log("lws reason \(reason.rawValue) wsi \(wsi) known \(connections.count)") }
        switch reason {
        case LWS_CALLBACK_HTTP:
            let connection = connections[wsi] ?? {
                let created = HTTPConnection(wsi: wsi, transport: self)
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
            // A WebSocket upgrade: only at the WebSocket handler's path, only when there is one.
            let path = HTTPConnection.header(WSI_TOKEN_GET_URI, wsi) ?? ""
            guard let webSocketHandler, Self.pathOnly(path) == webSocketHandler.webSocketPath else { return -1 }
            var request = HTTPRequest(method: .get, path: path, queryItems: HTTPConnection.queryItems(wsi) ?? [])
            for name in HTTPRequest.headerNames {
                if let value = HTTPConnection.header(name, wsi) { request.headers[name] = value }
            }
            upgrades[wsi] = request
            return 0
        case LWS_CALLBACK_ESTABLISHED:
            guard let webSocketHandler, let request = upgrades.removeValue(forKey: wsi) else { return -1 }
            let socket = WebSocketConnection(wsi: wsi, transport: self, now: Self.now())
            webSockets[wsi] = socket
            socket.session = webSocketHandler.openRealtime(request, sink: socket)
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

    /// A request target without its query (`/.ws?v=5&ns=demo` is `/.ws`).
    static func pathOnly(_ target: String) -> Substring { target.prefix { $0 != "?" } }

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
        let path = HTTPConnection.header(WSI_TOKEN_GET_URI, wsi) ?? ""
        let refusal: (Int, String)?
        if let webSocketHandler, Self.pathOnly(path) == webSocketHandler.webSocketPath {
            refusal = RequestHead.webSocketUpgradeRefusal(
                key: HTTPConnection.header(WSI_TOKEN_KEY, wsi), host: HTTPConnection.header(WSI_TOKEN_HOST, wsi),
                connection: HTTPConnection.header(WSI_TOKEN_CONNECTION, wsi),
                subprotocol: HTTPConnection.header(WSI_TOKEN_PROTOCOL, wsi))
        } else if let webSocketHandler {
            refusal = (404, "Not found: WebSocket connections are served at \(webSocketHandler.webSocketPath)")
        } else {
            refusal = (404, "Not found: no WebSocket connections are served here")
        }
        guard let (status, message) = refusal else { return 0 }
        let connection = HTTPConnection(wsi: wsi, transport: self)
        connections[wsi] = connection
        return connection.refuse(status: status, message: message)
    }

    /// WebSocket liveness (§1.7): a protocol ping after `webSocketPingSeconds` of silence, closed after
    /// `webSocketTimeoutSeconds` (which runs the session's onDisconnect operations).
    func checkWebSockets(now: Int64) {
        for socket in webSockets.values {
            // Soft limit over time (ARCHITECTURE.md, "Slow readers"): over a quarter of the budget for too long is a slow reader.
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
}

extension HTTPServerTransport: HeldMemoryBudget {
    /// What a handler holds between requests takes from the request-body budget (loop thread).
    public func hold(_ bytes: Int) -> BudgetRefusal? {
        switch bodyBudget.reserve(bytes) {
        case .granted: nil
        case .tooLarge(let bytesMax): .tooLarge(bytesMax: bytesMax)
        case .busy(let bytesInFlight, let bytesMax): .busy(bytesInFlight: bytesInFlight, bytesMax: bytesMax)
        }
    }
    public func release(_ bytes: Int) { bodyBudget.release(bytes) }
}
