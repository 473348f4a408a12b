public import HearthProtocol

/// What the server serves and who may do what.
public struct ServerConfiguration: Sendable {
    /// Emulator mode, as Firebase's emulator: `Bearer owner` is admin, any namespace is created on first
    /// use, unsigned ID tokens are taken at their word, and rules are open until some are deployed.
    public var emulator: Bool
    /// The admin token of non-emulator mode (kept in the data directory, see `AdminToken`).
    public var adminToken: String?
    /// The namespace of requests with neither `?ns=` nor a three-label Host (§1.2).
    public var defaultNamespace: String
    /// The Firebase project ID Auth serves (`/v1/projects/<project>/…`): the console manages its users.
    public var project: String
    /// Seconds between SSE `keep-alive` events (§6.7: about 30 s).
    public var keepAliveIntervalSeconds: Int
    /// This server's name among the nodes of a cluster (`hearth serve --node`): `GET /.info/node.json`
    /// and `/metrics` say it, so one can tell which node a balancer picked.
    public var node: String
    /// The reverse proxies whose `X-Forwarded-Proto` says whether a browser came over HTTPS (the
    /// console's cookie is `Secure` then); nobody else's is believed.
    public var trustedProxies: TrustedProxies
    /// Served over TLS (`--tls-cert`): the console's cookie is marked `Secure`.
    public var secureCookies: Bool
    /// The bytes the process's allocator has handed out and not had back, for `/metrics`
    /// (`hearth_heap_bytes`); nil reads nothing. The server links no C, so the command line gives it.
    public var heapInUse: (@Sendable () -> Int?)?

    public init(
        emulator: Bool, adminToken: String?, defaultNamespace: String, project: String = "demo-hearth",
        keepAliveIntervalSeconds: Int = 30, node: String = "hearth", trustedProxies: TrustedProxies = TrustedProxies(),
        secureCookies: Bool = false, heapInUse: (@Sendable () -> Int?)? = nil
    ) {
        self.heapInUse = heapInUse
        self.secureCookies = secureCookies
        self.node = node
        self.trustedProxies = trustedProxies
        self.project = project
        self.emulator = emulator
        self.adminToken = adminToken
        self.defaultNamespace = defaultNamespace
        self.keepAliveIntervalSeconds = keepAliveIntervalSeconds
    }
}
