public import HearthTriggers

/// Where webhooks keep what must survive a restart: each namespace's hooks document, each hook's cursor
/// in the feed, its dead letters and the recent delivery log; and, in a cluster, which node delivers
/// each hook. `hooks.sqlite` on a single node (``SQLiteHookStore``), PostgreSQL for a cluster
/// (HearthHooksPostgres). Every method may be called from any thread.
public protocol HookStorage: Sendable {
    /// True when other nodes share this storage: the service then follows their deploys and takes part
    /// in choosing one node per hook (``claim(_:_:)``).
    var isShared: Bool { get }

    func documents() throws -> [(namespace: String, document: HooksDocument)]
    func document(_ namespace: String) throws -> HooksDocument?
    /// Saves `document` and forgets the cursors, dead letters and log of hooks it no longer has.
    func save(_ document: HooksDocument, for namespace: String, at time: Int64) throws

    func cursor(_ namespace: String, _ hook: String) throws -> HookCursor?
    /// Saves a hook's cursor; in a cluster, only while this node delivers the hook (a node that lost the
    /// hook must not move its cursor back).
    func saveCursor(_ cursor: HookCursor, _ namespace: String, _ hook: String) throws

    /// Parks an event whose attempts ran out, and moves the cursor past it, in one transaction: the event
    /// is either still to deliver or parked, never neither.
    func park(_ letter: DeadLetter, cursor: HookCursor?, _ namespace: String, _ hook: String) throws
    func deadLetters(_ namespace: String, hook: String?) throws -> [DeadLetter]
    /// Marks dead letters for redelivery (one by id, or all of the hook's); how many were marked.
    func markForRedelivery(_ namespace: String, _ hook: String, eventId: String?) throws -> Int
    func redeliveries(_ namespace: String, _ hook: String) throws -> [DeadLetter]
    func removeDeadLetter(_ namespace: String, _ hook: String, eventId: String) throws

    /// Records one attempt (the newest `ServerLimits.hookLogRowsMax` per hook are kept).
    func log(_ attempt: DeliveryAttempt, _ namespace: String, _ hook: String) throws
    func deliveries(_ namespace: String, hook: String?, limit: Int) throws -> [(hook: String, attempt: DeliveryAttempt)]
    func counts(_ namespace: String, _ hook: String) throws -> (delivered: Int, failed: Int, dead: Int)

    /// Takes or keeps the hook for this node: true while this node is the one that delivers it. On a
    /// single node, always true; in a cluster, a lease renewed by each call, taken over by another node
    /// once it lapses (a node that stopped or died).
    func claim(_ namespace: String, _ hook: String) throws -> Bool
    /// Lets the hook go (this node stops), so another node may take it at once.
    func release(_ namespace: String, _ hook: String)
    /// The node that delivers the hook now, where several might (nil on a single node).
    func owner(_ namespace: String, _ hook: String) throws -> String?

    func close()
}

/// What the server keeps for each functions process (docs/functions.md, "Functions in Swift"): the
/// patterns its functions watch, its cursors in the feed and the auth feed, when it was last heard
/// from, and the events whose handler ran out of attempts. Beside the hooks' tables, in SQLite or
/// PostgreSQL. Every method may be called from any thread.
public protocol FunctionConsumerStorage: Sendable {
    func consumers(_ namespace: String?) throws -> [FunctionConsumer]
    func consumer(_ namespace: String, _ name: String) throws -> FunctionConsumer?
    /// Registers `consumer`, keeping the cursor of one registered before under its name.
    func register(_ consumer: FunctionConsumer) throws
    /// Moves the cursors forward (never back: a late save from an older run must not replay events),
    /// the feed's to `after` and the auth feed's to `authAfter` (nil: leave it); false when there is no
    /// such consumer.
    func advance(_ namespace: String, _ name: String, to after: Int64?, authAfter: Int64?, at time: Int64) throws -> Bool
    /// Forgets the consumer, its cursor and its parked events; false when there was none.
    func remove(_ namespace: String, _ name: String) throws -> Bool
    /// Keeps a parked event (the newest `ServerLimits.parkedFunctionEventsMax` per consumer are kept).
    func park(_ event: ParkedEvent, _ namespace: String, _ consumer: String) throws
    func parked(_ namespace: String, _ consumer: String) throws -> [ParkedEvent]
    func parkedCount(_ namespace: String, _ consumer: String) throws -> Int
    /// Forgets parked events (one by id, or all of the consumer's); how many.
    func dismiss(_ namespace: String, _ consumer: String, eventId: String?) throws -> Int
}
