public import HearthProtocol
public import HearthSupport

/// How the transport listens and what it bounds.
public struct TransportConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Largest request body accepted; a larger one is answered 413 and the connection closed.
    public var requestBodyBytesMax: Int
    /// Request bodies read or handled at once, in bytes (``RequestBodyBudget``): from the process's memory
    /// limit (`ServerLimits.memoryBytesPerRequestBodyByte`); nil when no limit is known.
    public var requestBodyBytesInFlightMax: Int?
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
    /// Where the transport's diagnostics go (the `HEARTH_TRACE_LWS` callback trace).
    public var log = Log.standardError
    /// The `Strict-Transport-Security` value sent with every response over TLS (never over plain HTTP,
    /// where browsers ignore it and it would only mislead); nil sends none.
    public var strictTransportSecurity: String? = TransportConfiguration.defaultStrictTransportSecurity

    /// A year, for this host only: `includeSubDomains` and `preload` would bind every subdomain of the
    /// name to HTTPS for that year, which only the owner of the whole domain can decide (`--hsts`).
    public static let defaultStrictTransportSecurity = "max-age=31536000"

    /// The headers every response carries: HSTS when served over TLS.
    var responseHeaders: [(String, String)] {
        guard certificatePath != nil, let value = strictTransportSecurity else { return [] }
        return [("strict-transport-security", value)]
    }

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
