/// Every bound the server and its transport put on a client, in one place, each with its reason.
/// (Data limits — key length, depth, string size — are HearthCore's `Limits`; the rules engine's
/// evaluation budget is `RulesLimits`; the wire frame size is `Wire.frameCharactersMax`.)
///
/// Open connections (HTTP, streams and WebSockets together) are bounded by the process's open-file limit
/// (`ulimit -n`; 20,000 on these machines), from which lws sizes its socket table: fixing a smaller table
/// here would switch lws to a slower lookup. Past it, new connections are refused by the kernel.
///
/// A client over a bound gets a clear error (REST 400/413, realtime `failure` with the limit in its
/// message) or, for the outbound queue, is disconnected with the reason; nobody else waits for it.
public enum ServerLimits {
    /// Largest REST request body: Firebase's documented limit for a single REST write (256 MB). Bodies
    /// are buffered whole before parsing, so this is also the most memory one request can take.
    public static let requestBodyBytesMax = 256 << 20

    /// Under a memory limit (`ulimit -v`, a cgroup's memory.max), request bodies read or handled at once
    /// are held to the limit divided by this, and a larger body is refused (413, or 503 while others hold
    /// the budget) instead of an allocation failing, which ends a Swift process. A body being parsed and
    /// written took 10–11 times its size in resident memory and about 20 times in address space
    /// (objects of small records and of single numbers, docs/reliability.md); 32 leaves the rest for the
    /// trees, the threads and the libraries.
    public static let memoryBytesPerRequestBodyByte = 32

    /// Bytes of realtime messages a connection holds (arriving, or reassembled from the protocol's
    /// segments) without taking from the request-body budget above: the SDKs' messages are a few hundred
    /// bytes, and counting each would cost every realtime write; larger ones take their whole size from
    /// the budget while they arrive and are handled, and a connection whose message does not fit is
    /// closed (the SDKs reconnect and send their unacknowledged writes again).
    public static let realtimeMessageBytesUnbudgeted = 64 << 10

    /// Largest request head (request line and headers) answered; a larger one gets 431 and the
    /// connection is closed. Firebase clients send well under 2 kB; an ID token in a header is about 1 kB.
    public static let requestHeaderBytesMax = 16 * 1024

    /// Longest request target (path and query) answered; a longer one gets 414. A data path is at most
    /// 768 bytes (HearthCore's `Limits.pathLengthBytesMax`); the query carries an ID token and a few
    /// short parameters.
    public static let requestTargetBytesMax = 8 * 1024

    /// Bytes lws keeps per connection for a request head while it reads one: room for a head over the
    /// two bounds above to be read whole and answered 414 or 431, instead of lws closing the connection
    /// with no answer. Taken from lws's pool only while a head is being read (at most 1,024 at once).
    public static let requestHeadBufferBytes = 65_535

    /// Bytes one connection (a stream or a WebSocket) may have queued for sending before it is cut off
    /// as too slow: 4 MiB is a few seconds of a busy listen on a slow mobile link, and bounds the memory
    /// a client that stops reading can pin.
    public static let outboundBytesPerConnectionMax = 4 << 20

    /// Seconds a WebSocket may keep more than a quarter of ``outboundBytesPerConnectionMax`` queued
    /// before it counts as slow (the soft limit over time, ARCHITECTURE.md, "Slow readers"): bursts pass, a stalled reader not.
    public static let outboundSoftLimitSeconds = 10

    /// Milliseconds a REST read (or a compare-and-set) of a namespace other nodes also write (a cluster)
    /// waits to catch up with what they acknowledged, before it is refused with a 503: a catch-up takes
    /// about a millisecond, and answering from a tree that may lack acknowledged writes would not be
    /// linearizable (docs/reliability.md).
    public static let readCatchUpWaitMilliseconds = 1_000

    /// Seconds a connection may sit in one state (headers or a body arriving): bounds slowloris.
    public static let requestStateTimeoutSeconds = 10

    /// Seconds an idle HTTP keep-alive connection is kept: long enough for a client's next call, short
    /// enough that idle sockets do not pile up (firebase-admin's pool reuses them within that).
    public static let keepAliveTimeoutSeconds = 120

    /// Seconds of silence on a WebSocket before a protocol ping (the JS SDK sends its own keepalive
    /// every 45 s, so a live client never needs it), and before the socket counts as dead and its
    /// onDisconnect operations run.
    public static let webSocketPingSeconds = 60
    public static let webSocketTimeoutSeconds = 180

    /// Listens (distinct path and query) one realtime connection may hold: far above what an app
    /// keeps open, and it bounds the per-write work one connection can cause.
    public static let listensPerConnectionMax = 10_000

    /// onDisconnect operations one connection may register: each is a write run at disconnect.
    public static let onDisconnectOperationsPerConnectionMax = 1_000

    /// Largest realtime message a client may send, reassembled from its frames (WebSocket fragments,
    /// count-prefixed frames or long-poll segments): far above the JS SDK's 10 MB string limit plus
    /// its envelope, and the most memory one incoming message can take.
    public static let realtimeMessageBytesMax = 16 << 20

    /// Largest file `hearth serve --public` serves (answers are held whole in memory); a larger one is
    /// answered 500 saying so: big media belongs behind a CDN or nginx.
    public static let staticFileBytesMax = 32 << 20

    /// Long-poll segments a session keeps waiting for the rest of their message: the JS SDK cuts a
    /// message into segments of about 1,800 characters, so this holds any message it can send.
    public static let longPollSegmentsPendingMax = 10_000
    /// A long poll is answered (with `[]` when nothing is queued) after this long, before proxies give up.
    public static let longPollHoldMilliseconds: Int64 = 20_000
    /// A long-poll session with no poll for this long is closed (its onDisconnect runs).
    public static let longPollIdleMilliseconds: Int64 = 60_000
    /// Accounts whose verdict (disabled, tokens valid since) a node keeps in memory when the accounts are
    /// in PostgreSQL (AccountVerdicts); the oldest answers go first beyond it.
    public static let accountVerdictsMax = 100_000

    // MARK: Identity providers (signInWithIdp)

    /// Longest ID or access token a client may present for a provider: real ones are 1–2 KiB.
    public static let providerTokenBytesMax = 16 * 1024

    /// Keys read from one JWKS document (Google and Apple publish 2–3; the rest are ignored).
    public static let providerKeysPerSetMax = 50

    /// Every request to a provider (discovery, keys, user APIs): connect within, answer within, and
    /// no more than this many bytes, so a provider that hangs or floods costs one auth thread a bounded
    /// time and memory.
    public static let providerFetchConnectSeconds = 3
    public static let providerFetchTotalSeconds = 5
    public static let providerResponseBytesMax = 1 << 20

    /// How long fetched keys and discovery documents are kept when the provider's `Cache-Control`
    /// says nothing (or more than the maximum, or less than the minimum).
    public static let providerKeysMaxAgeDefaultSeconds = 3_600
    public static let providerKeysMaxAgeMinSeconds = 60
    public static let providerKeysMaxAgeMaxSeconds = 86_400

    /// A token naming a key the cached set lacks makes the keys be fetched again, at most this often per
    /// provider (a stream of made-up `kid`s must not become a stream of requests).
    public static let providerKeysRefetchIntervalSeconds = 30

    /// After a failed fetch, sign-ins with that provider fail at once for this long instead of each
    /// waiting out the provider's timeout again.
    public static let providerFetchFailureBackoffSeconds = 10

    /// Clock skew allowed on a provider token's `exp` and `iat` (Google's own libraries allow 300 s).
    public static let providerTokenClockSkewSeconds = 300

    /// Provider configurations a project may hold (`oauthIdpConfigs` and `inboundSamlConfigs` together).
    public static let providerConfigsMax = 100

    /// Entries one read of the change feed returns when it names no `limit`, and the most it may name
    /// (`GET /.feed.json`, docs/feed.md).
    public static let feedPageEntriesDefault = 1_000
    public static let feedPageEntriesMax = 10_000

    /// The most a blocking auth hook's answer may hold (docs/functions.md, "Blocking auth hooks"): its
    /// changes are a few fields and claims of at most 1,000 characters each.
    public static let blockingHookResponseBytesMax = 64 * 1024

    /// Delivery log rows kept per webhook, and parked events kept per functions process (docs/functions.md):
    /// older ones go.
    public static let hookLogRowsMax = 1000
    public static let parkedFunctionEventsMax = 1000

    /// A location's history (`GET /.history.json`, docs/feed.md): changes one page holds at most, and
    /// the feed entries one request looks at before it answers with where to go on from.
    public static let historyPageChangesMax = 1_000
    public static let historyScanEntriesMax = 100_000
    /// A restore through the server (`POST /.restore.json`, the console's): the feed entries after the
    /// moment it undoes at most; further back, `hearth restore` (which has no such bound) does it.
    public static let restoreUndoneEntriesMax = 100_000
}
