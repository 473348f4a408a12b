import HearthCore
import HearthRules
import HearthStorage
import HearthProtocol

/// One database: its durable tree, its stored rules, and who listens to it (SSE streams and realtime
/// sessions, with their subscriptions in one ``FanOut``). Loop thread only.
final class Namespace {
    let name: String
    let database: DurableDatabase
    /// Open SSE streams by id.
    var streams: [UInt64: EventStream] = [:]
    /// Open realtime (WebSocket) sessions by id.
    var realtimeSessions: [UInt64: RealtimeSession] = [:]
    /// Their handshake session ids (`s`), for a reconnect's `ls`.
    var realtimeSessionIDs: [String: UInt64] = [:]
    /// The console's change feeds (``ConsoleFeed``) by id.
    var consoleFeeds: [UInt64: ConsoleFeed] = [:]
    /// Every stream's and every realtime listen's subscription: what a committed write is sent to.
    var fanOut = FanOut()
    /// The security rules every read and write of a non-admin caller is decided by; `source` is the text
    /// as uploaded (`PUT /.settings/rules.json`), comments included. Replace with ``replaceRules(_:now:)``.
    var rules: RuleSet
    /// False while `rules` are the mode's default (nothing deployed).
    var rulesDeployed: Bool
    /// Where deliveries are counted (nil in tests that do not look).
    let metrics: ServerMetrics?

    init(name: String, database: DurableDatabase, rules: RuleSet, rulesDeployed: Bool, metrics: ServerMetrics? = nil) {
        self.metrics = metrics
        self.name = name
        self.database = database
        self.rules = rules
        self.rulesDeployed = rulesDeployed
    }

    /// Sends what a committed write means to every stream and listen it reaches, then cuts off the
    /// targets over their outbound budget (ARCHITECTURE.md, "Slow readers").
    func publish(_ change: CommittedChange) {
        if !consoleFeeds.isEmpty {
            let locations = change.write.locations
            for feed in Array(consoleFeeds.values) { feed.changed(locations) }
        }
        guard !fanOut.isEmpty else { return }
        var slow: [ObjectIdentifier: any FanOutTarget] = [:]
        for delivery in fanOut.plan(change) {
            if delivery.target.deliver(delivery.messages) {
                metrics?.countDeliveries(delivery.messages)
            } else {
                slow[ObjectIdentifier(delivery.target)] = delivery.target
            }
        }
        for target in slow.values { target.disconnectSlowReader() }
    }

    // MARK: Streams

    func addStream(_ stream: EventStream) {
        streams[stream.id] = stream
        fanOut.subscribe(stream.key, FanOut.Subscription(
            target: stream, encoding: .sse(exportFormat: stream.exportFormat), params: stream.params, window: stream.initialWindow))
    }

    func removeStream(_ stream: EventStream) {
        guard streams.removeValue(forKey: stream.id) != nil else { return }
        fanOut.unsubscribe(stream.key)
    }
}
