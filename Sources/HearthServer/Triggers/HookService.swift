public import HearthProtocol
public import HearthStorage
public import HearthTriggers

/// Webhook delivery, as the server sees it (HearthHooks supplies it to `hearth serve`; docs/functions.md).
/// The server owns the feed and the namespaces; the service owns the hooks documents, cursors, dead
/// letters and the delivery log, and does every wait (disk, network) on threads of its own.
public protocol HookService: AnyObject, Sendable {
    /// Starts delivering the hooks deployed before; `host` reads the feed and wakes the service on commits.
    /// Called once, from the loop thread when it starts.
    func start(host: any TriggerHost)
    /// Answers an admin's request to `/.settings/hooks…` (the server checked the caller). Called off the
    /// loop; may wait on disk or on `host`.
    func answer(_ request: HookRequest) -> HTTPResponse
    /// Stops delivering, waiting for deliveries under way to end (each is bounded by its timeout).
    func stop()
}

/// A request to the hooks' endpoints of a namespace: `hooks` (the document), `hooks/status`, `hooks/log`,
/// `hooks/dead`, `hooks/redeliver`.
public struct HookRequest: Sendable {
    public var method: HTTPRequest.Method
    public var namespace: String
    /// The path below `.settings/`, without `.json`: `hooks`, `hooks/log`…
    public var endpoint: String
    public var parameters: [String: String]
    public var body: [UInt8]

    public init(method: HTTPRequest.Method, namespace: String, endpoint: String, parameters: [String: String], body: [UInt8]) {
        self.method = method
        self.namespace = namespace
        self.endpoint = endpoint
        self.parameters = parameters
        self.body = body
    }
}

/// What the server offers trigger delivery: the feed, and a wake-up after each commit. Any thread.
public protocol TriggerHost: AnyObject, Sendable {
    /// Makes `namespace`'s writes keep the earlier values `patterns` need (``TriggerPatterns``) and calls
    /// `woken` (on the loop; it must return at once) after each of its commits; then, once every write
    /// taken before is committed, answers the feed's newest position: where a new hook starts.
    func watch(
        namespace: String, patterns: TriggerPatterns, woken: @escaping @Sendable () -> Void,
        ready: @escaping @Sendable (Result<Int64, StorageError>) -> Void)
    /// A page of `namespace`'s feed after `position` (off the loop, on the engine's feed reader).
    func readFeed(namespace: String, after position: Int64, limit: Int, completion: @escaping @Sendable (Result<ChangeFeedPage, StorageError>) -> Void)
}
