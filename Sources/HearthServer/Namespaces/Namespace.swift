import HearthCore
import HearthRules
import HearthStorage
import HearthProtocol
import HearthTriggers

/// One database: its durable tree, its stored rules, and who listens to it (SSE streams and realtime
/// sessions, with their subscriptions in one ``FanOut``). Loop thread only.
final class Namespace {
    let name: String
    let database: DurableDatabase
    /// Open SSE streams by id.
    var streams: [UInt64: EventStream] = [:]
    /// The console's change feeds (``ConsoleFeed``) by id.
    var consoleFeeds: [UInt64: ConsoleFeed] = [:]
    /// Admins following the change feed (``ChangeFeedStream``) by id: woken by every commit.
    var changeFeedStreams: [UInt64: ChangeFeedStream] = [:]
    /// Realtime sessions, their listens and every subscription a committed write is sent to: one owner.
    let listeners = Listeners()
    /// The write IDs applied or in flight: a write its client sends again is not made twice.
    var rememberedWrites: RememberedWrites<(WritePipeline.Outcome) -> Void>
    /// How its storage's checkpoints went, as last said in the log (``WritePipeline``).
    var checkpoints = CheckpointFailures()
    /// Writes that failed in storage since the last one stored (the log says when this starts and ends).
    var failingWrites = 0
    /// The security rules every read and write of a non-admin caller is decided by; `source` is the text
    /// as uploaded (`PUT /.settings/rules.json`), comments included. Replace with ``replaceRules(_:now:)``.
    var rules: RuleSet
    /// False while `rules` are the mode's default (nothing deployed).
    var rulesDeployed: Bool
    /// What the namespace's triggers (webhooks) watch: each write's feed entry keeps the earlier value of
    /// the locations above it that these match (``TriggerPatterns/contexts(of:)``). Set by the registry.
    var triggerPatterns = TriggerPatterns()
    /// Told after each commit when triggers watch the namespace (webhook delivery wakes up).
    var committed: (() -> Void)?
    /// Where deliveries are counted (nil in tests that do not look).
    let metrics: ServerMetrics?

    init(
        name: String, database: DurableDatabase, rules: RuleSet, rulesDeployed: Bool, appliedWriteIDs: [String] = [],
        metrics: ServerMetrics? = nil
    ) {
        rememberedWrites = RememberedWrites(applied: appliedWriteIDs)
        self.metrics = metrics
        self.name = name
        self.database = database
        self.rules = rules
        self.rulesDeployed = rulesDeployed
    }

    /// Sends what a committed write means to every stream and listen it reaches, then cuts off the
    /// targets over their outbound budget (ARCHITECTURE.md, "Slow readers").
    func publish(_ change: CommittedChange) {
        committed?()
        if !changeFeedStreams.isEmpty {
            for stream in Array(changeFeedStreams.values) { stream.committed() }
        }
        if !consoleFeeds.isEmpty {
            let locations = change.write.locations
            for feed in Array(consoleFeeds.values) { feed.changed(locations) }
        }
        guard !listeners.fanOut.isEmpty else { return }
        var slow: [ObjectIdentifier: any FanOutTarget] = [:]
        for delivery in listeners.plan(change) {
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
        listeners.subscribe(stream)
    }

    func removeStream(_ stream: EventStream) {
        guard streams.removeValue(forKey: stream.id) != nil else { return }
        listeners.unsubscribe(stream)
    }
}
