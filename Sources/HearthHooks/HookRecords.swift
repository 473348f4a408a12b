import Foundation
import HearthCore
public import HearthTriggers

/// Where a hook is in its namespace's feed: the events of entries before `position` are delivered (or
/// parked), and of the entry at `position` those with an index below `nextIndex`.
public struct HookCursor: Sendable, Equatable {
    public var position: Int64
    public var nextIndex: Int

    public init(position: Int64, nextIndex: Int) {
        self.position = position
        self.nextIndex = nextIndex
    }

    /// Every event of the entry at `position` and before it is done: a new hook starts at the feed's head so.
    public static func after(_ position: Int64) -> HookCursor { HookCursor(position: position, nextIndex: Int(Int32.max)) }

    /// The position to read the feed after.
    public var readAfter: Int64 { nextIndex == Int(Int32.max) ? position : position - 1 }

    /// Whether the event `index` of the entry at `position` is still to deliver.
    public func isDue(_ position: Int64, index: Int) -> Bool { position > self.position || (position == self.position && index >= nextIndex) }
}

/// An event whose attempts ran out: kept, with the body it was sent with, until redelivered.
public struct DeadLetter: Sendable, Equatable {
    public var hook: String
    public var eventId: String
    public var position: Int64
    public var body: [UInt8]
    public var attempts: Int
    public var error: String
    public var parkedAt: Int64
    public var redeliver: Bool

    public init(hook: String, eventId: String, position: Int64, body: [UInt8], attempts: Int, error: String, parkedAt: Int64, redeliver: Bool = false) {
        self.hook = hook
        self.eventId = eventId
        self.position = position
        self.body = body
        self.attempts = attempts
        self.error = error
        self.parkedAt = parkedAt
        self.redeliver = redeliver
    }
}

/// One try at delivering an event, as the log shows it: the receiver's status (0: no answer) and what
/// it said, or why there was no answer.
public struct DeliveryAttempt: Sendable, Equatable {
    public var eventId: String
    public var attempt: Int
    public var status: Int
    public var latencyMilliseconds: Int64
    public var excerpt: String
    public var time: Int64

    public init(eventId: String, attempt: Int, status: Int, latencyMilliseconds: Int64, excerpt: String, time: Int64) {
        (self.eventId, self.attempt, self.status, self.latencyMilliseconds, self.excerpt, self.time) =
            (eventId, attempt, status, latencyMilliseconds, excerpt, time)
    }

    public var succeeded: Bool { (200...299).contains(status) }
}

/// A functions process as the server knows it: its name, the patterns of its functions, and where it
/// is in the namespace's feed (every entry up to `after` handled or parked).
public struct FunctionConsumer: Sendable, Equatable {
    public var namespace: String
    public var name: String
    public var patterns: [TriggerPattern]
    public var after: Int64
    /// When it last registered or saved its cursor (milliseconds since the epoch).
    public var seenAt: Int64
    /// Where it is in the auth feed (its user functions'), nil before it first says.
    public var authAfter: Int64?

    public var pathsJSON: String { "[" + patterns.map { Node($0.description).json() }.joined(separator: ",") + "]" }

    /// The patterns of ``pathsJSON``'s form; nil when `text` is not a JSON array of strings.
    public static func patterns(pathsJSON text: String) -> [TriggerPattern]? {
        guard let list = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String] else { return nil }
        return list.compactMap { try? TriggerPattern($0) }
    }

    public init(namespace: String, name: String, patterns: [TriggerPattern], after: Int64, seenAt: Int64, authAfter: Int64? = nil) {
        (self.namespace, self.name, self.patterns, self.after, self.seenAt, self.authAfter) = (namespace, name, patterns, after, seenAt, authAfter)
    }
}

/// An event whose handler threw on every attempt, as its functions process reported it.
public struct ParkedEvent: Sendable, Equatable {
    public var function: String
    public var eventId: String
    public var position: Int64
    /// The event as the process described it (a JSON object).
    public var eventJSON: String
    public var attempts: Int
    public var error: String
    public var parkedAt: Int64

    public init(function: String, eventId: String, position: Int64, eventJSON: String, attempts: Int, error: String, parkedAt: Int64) {
        (self.function, self.eventId, self.position, self.eventJSON, self.attempts, self.error, self.parkedAt) =
            (function, eventId, position, eventJSON, attempts, error, parkedAt)
    }
}
