/// The slow-reader bound of one connection's outbound queue (ARCHITECTURE.md, "Slow readers"), decided apart from the
/// queue itself so that WebSockets, event streams and long-polls cut readers off by the same rule.
///
/// The rule: a message is queued whole, however large, unless what the connection holds *apart from
/// its largest message* is already over `limitBytes`. Counting every byte would cut off a client that
/// keeps up but has just been sent one large snapshot (a 5 MB listen, then the `ok` that follows it);
/// leaving the largest message out still bounds what a client that stops reading can pin to
/// `limitBytes` plus a few messages the server chose to produce for it.
///
///     var budget = OutboundBudget(limitBytes: 4 << 20)
///     guard !budget.isOver(queuedBytes: queue.count) else { return false }   // too slow: cut off
///     budget.willQueue(messageBytes: message.count, queuedBytes: queue.count)
///     queue += message
public struct OutboundBudget: Sendable {
    public let limitBytes: Int
    /// The largest message queued since the queue was last empty.
    public private(set) var largestMessageBytes = 0

    public init(limitBytes: Int) {
        self.limitBytes = limitBytes
    }

    /// Whether a connection holding `queuedBytes` is too far behind to be sent more.
    public func isOver(queuedBytes: Int) -> Bool {
        queuedBytes - largestMessageBytes > limitBytes
    }

    /// Whether it is over the soft limit (a quarter of the bound), which a connection may stay over
    /// only for a while (``ServerLimits/outboundSoftLimitSeconds``): bursts pass, a stalled reader not.
    public func isOverSoftLimit(queuedBytes: Int) -> Bool {
        queuedBytes - largestMessageBytes > limitBytes / 4
    }

    /// Records a message about to be queued behind `queuedBytes`.
    public mutating func willQueue(messageBytes: Int, queuedBytes: Int) {
        if queuedBytes == 0 { largestMessageBytes = 0 }
        largestMessageBytes = max(largestMessageBytes, messageBytes)
    }
}
