internal import CLibWebSockets
public import Foundation
import HearthSupport
import Synchronization

/// What a ``WebSocketClient`` reports, in order, on its loop's thread.
public enum WebSocketClientEvent: Sendable, Equatable {
    /// The upgrade succeeded: messages can flow.
    case opened
    /// One complete text message (fragments reassembled).
    case message([UInt8])
    /// The connection is over (refused, failed, closed by either side); nothing follows.
    case closed(reason: String)
}

/// A WebSocket client connection (RFC 6455) on Debian's libwebsockets, for the Swift SDK on Linux
/// (Foundation's WebSocket task does not connect there). `ws://` and `wss://` (certificate and host name
/// checked against the system's trusted roots, or a file of your own).
///
/// One loop thread (``WebSocketClientLoop``) owns every client socket of the process; this object may be
/// used from any thread. Events arrive on the loop thread: hand them on, do not block it.
///
///     let socket = WebSocketClient(url: URL(string: "ws://localhost:9000/.ws?ns=demo&v=5")!) { event in … }
///     socket.connect()
///     socket.send(Array(#"{"t":"d","d":{"r":1,"a":"s","b":{}}}"#.utf8))
///     socket.close()
public final class WebSocketClient: @unchecked Sendable {  // mutable state is behind `state` or on the loop thread
    public let url: URL
    private let loop: WebSocketClientLoop
    private let handler: @Sendable (WebSocketClientEvent) -> Void

    private struct State {
        var outbox: [[UInt8]] = []
        var closeRequested = false
        var closed = false
    }
    private let state = Mutex(State())

    // Loop-thread state.
    fileprivate var wsi: OpaquePointer?
    fileprivate var incoming: [UInt8] = []
    fileprivate var opened = false
    /// Strings lws keeps pointers to until the connection attempt is made.
    fileprivate var connectStrings: [UnsafeMutablePointer<CChar>] = []

    /// Largest WebSocket message accepted from the server; a larger one closes the connection. Hearth and
    /// Firebase split messages into frames of about 16 KiB (docs/protocol.md §1.8), so this only
    /// bounds a server that does not.
    public static let messageBytesMax = 64 << 20

    /// - Parameter trustedCertificatesFile: PEM roots to trust instead of the system's (tests, private CAs).
    public init(
        url: URL, trustedCertificatesFile: String? = nil,
        handler: @escaping @Sendable (WebSocketClientEvent) -> Void
    ) {
        self.url = url
        self.handler = handler
        loop = WebSocketClientLoop.shared(trustedCertificatesFile: trustedCertificatesFile)
    }

    /// Starts connecting; ``WebSocketClientEvent/opened`` or ``WebSocketClientEvent/closed(reason:)`` follows.
    public func connect() {
        loop.execute { [self] in startConnecting() }
    }

    /// Queues a text message; dropped once the connection is closed.
    public func send(_ text: [UInt8]) {
        let accepted = state.withLock { state -> Bool in
            guard !state.closed, !state.closeRequested else { return false }
            state.outbox.append(text)
            return true
        }
        if accepted { loop.execute { [self] in requestWritable() } }
    }

    /// Closes the connection (what is queued is dropped); ``WebSocketClientEvent/closed(reason:)`` follows
    /// unless it was already closed.
    public func close() {
        state.withLock { $0.closeRequested = true }
        loop.execute { [self] in
            if let wsi {
                lws_callback_on_writable(wsi)
            } else {
                finish("closed by the client")
            }
        }
    }

    // MARK: Loop thread

    private func startConnecting() {
        guard !state.withLock({ $0.closeRequested || $0.closed }) else { return finish("closed by the client") }
        guard let context = loop.context else { return finish(loop.startError ?? "the WebSocket client could not start") }
        let secure: Bool
        switch url.scheme?.lowercased() {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default: return finish("unsupported URL scheme in \(url.absoluteString): use ws:// or wss://")
        }
        guard let host = url.host, !host.isEmpty else { return finish("no host in \(url.absoluteString)") }
        let port = url.port ?? (secure ? 443 : 80)
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        let hostHeader = url.port.map { "\(host):\($0)" } ?? host
        func keep(_ text: String) -> UnsafePointer<CChar> {
            let copy = strdup(text)!
            connectStrings.append(copy)
            return UnsafePointer(copy)
        }
        var info = lws_client_connect_info()
        info.context = context
        info.address = keep(host)
        info.port = Int32(port)
        info.path = keep(path)
        info.host = keep(hostHeader)
        info.origin = keep(hostHeader)
        info.ssl_connection = secure ? Int32(LCCSCF_USE_SSL.rawValue) : 0
        info.ietf_version_or_minus_one = -1
        info.protocol = nil
        info.userdata = Unmanaged.passRetained(self).toOpaque()  // released when the connection ends
        let created = lws_client_connect_via_info(&info)
        if created == nil {
            // lws reports most failures through CLIENT_CONNECTION_ERROR; a nil here (before any callback)
            // means it could not even start, and it holds no reference to `self`.
            if !state.withLock({ $0.closed }) && wsi == nil {
                Unmanaged<WebSocketClient>.fromOpaque(info.userdata).release()
                finish("could not connect to \(hostHeader)")
            }
        }
    }

    fileprivate func requestWritable() {
        if let wsi { lws_callback_on_writable(wsi) }
    }

    fileprivate func established(_ wsi: OpaquePointer) {
        self.wsi = wsi
        opened = true
        freeConnectStrings()
        if state.withLock({ $0.closeRequested }) {
            lws_callback_on_writable(wsi)
            return
        }
        handler(.opened)
        lws_callback_on_writable(wsi)
    }

    /// One fragment of a message; the message is delivered when its last fragment is in.
    fileprivate func received(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard incoming.count + bytes.count <= Self.messageBytesMax else {
            finish("the server sent a message over \(Self.messageBytesMax) bytes")
            return -1
        }
        incoming.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let message = incoming
        incoming.removeAll(keepingCapacity: incoming.capacity <= 64 * 1024)
        if lws_frame_is_binary(wsi) == 0, !state.withLock({ $0.closeRequested }) { handler(.message(message)) }
        return 0
    }

    /// Writes one queued message (lws allows one write per writable callback); -1 ends the connection.
    fileprivate func writable(_ wsi: OpaquePointer) -> Int32 {
        let (next, closing, more) = state.withLock { state -> ([UInt8]?, Bool, Bool) in
            if state.closeRequested { return (nil, true, false) }
            guard !state.outbox.isEmpty else { return (nil, false, false) }
            let first = state.outbox.removeFirst()
            return (first, false, !state.outbox.isEmpty)
        }
        if closing {
            var reason = Array("client closing".utf8)
            lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, &reason, reason.count)
            return -1
        }
        guard let next else { return 0 }
        let pre = CHearthLWS_pre()
        var buffer = [UInt8](repeating: 0, count: pre + next.count)
        buffer.withUnsafeMutableBufferPointer { raw in
            next.withUnsafeBufferPointer { source in
                if let base = source.baseAddress { (raw.baseAddress! + pre).update(from: base, count: source.count) }
            }
        }
        let written = buffer.withUnsafeMutableBufferPointer { raw in
            lws_write(wsi, raw.baseAddress! + pre, next.count, LWS_WRITE_TEXT)
        }
        if written < next.count { return -1 }
        if more { lws_callback_on_writable(wsi) }
        return 0
    }

    /// The connection is over: reports it once and lets go of lws's reference to this object.
    fileprivate func finish(_ reason: String) {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true; state.outbox = [] }
            return !state.closed
        }
        wsi = nil
        freeConnectStrings()
        if first { handler(.closed(reason: reason)) }
    }

    private func freeConnectStrings() {
        for text in connectStrings { free(text) }
        connectStrings = []
    }
}

/// The thread that runs libwebsockets for every ``WebSocketClient`` of the process (one per set of
/// trusted roots): lws's own poll loop, woken by `lws_cancel_service` when another thread hands it work.
final class WebSocketClientLoop: @unchecked Sendable {  // `context` is set before the thread starts; the rest is locked
    private static let loops = Mutex<[String: WebSocketClientLoop]>([:])

    static func shared(trustedCertificatesFile: String?) -> WebSocketClientLoop {
        loops.withLock { loops in
            let key = trustedCertificatesFile ?? ""
            if let loop = loops[key] { return loop }
            let loop = WebSocketClientLoop(trustedCertificatesFile: trustedCertificatesFile)
            loops[key] = loop
            return loop
        }
    }

    private(set) var context: OpaquePointer?
    private(set) var startError: String?
    private let inbox = Mutex<[@Sendable () -> Void]>([])
    private let protocols: UnsafeMutablePointer<lws_protocols>

    private init(trustedCertificatesFile: String?) {
        protocols = .allocate(capacity: 2)
        protocols[0] = lws_protocols()
        protocols[0].name = UnsafePointer(strdup("hearth-client"))
        protocols[0].callback = { wsi, reason, user, input, length in
            guard let wsi else { return 0 }
            return WebSocketClientLoop.callback(wsi, reason, user, input, length)
        }
        protocols[0].rx_buffer_size = 64 * 1024
        protocols[1] = lws_protocols()

        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
        info.timeout_secs = 15
        if let file = trustedCertificatesFile { info.client_ssl_ca_filepath = UnsafePointer(strdup(file)) }
        // A client library stays quiet (a refused certificate reaches the app as a failed connection);
        // HEARTH_LWS_LOG=31 shows lws's own trace.
        // (lws's default level prints a notice per context, so it is set either way.)
        lws_set_log_level(ProcessInfo.processInfo.environment["HEARTH_LWS_LOG"].flatMap({ Int32($0) }) ?? 0, nil)
        context = lws_create_context(&info)
        if context == nil { startError = "libwebsockets could not create a client context" }
        NamedThread.start("hearth.client.websocket") { [self] in run() }
    }

    /// Runs `work` on the loop thread.
    func execute(_ work: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(work) }
        if let context { lws_cancel_service(context) } else { work() }
    }

    private func run() {
        guard let context else { return }
        while true {
            drainInbox()
            if lws_service(context, 0) < 0 { break }
        }
    }

    private func drainInbox() {
        let work = inbox.withLock { items in
            defer { items = [] }
            return items
        }
        for item in work { item() }
    }

    private static func client(_ user: UnsafeMutableRawPointer?) -> WebSocketClient? {
        user.map { Unmanaged<WebSocketClient>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func callback(
        _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
        _ input: UnsafeMutableRawPointer?, _ length: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            // lws_cancel_service woke the loop: `run` drains the inbox when lws_service returns.
            return 0
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            client(user)?.established(wsi)
            return 0
        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard let socket = client(user), let input else { return 0 }
            return socket.received(wsi, UnsafeRawBufferPointer(start: input, count: length))
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            return client(user)?.writable(wsi) ?? -1
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let detail = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "unknown error"
            if let user, let socket = client(user) {
                socket.finish("could not connect: \(detail)")
                Unmanaged<WebSocketClient>.fromOpaque(user).release()
            }
            return 0
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            return 0
        case LWS_CALLBACK_CLIENT_CLOSED:
            if let user, let socket = client(user) {
                socket.finish("closed")
                Unmanaged<WebSocketClient>.fromOpaque(user).release()
            }
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }
}
