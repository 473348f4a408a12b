import HearthCore

/// Every bound the SDK puts on what it receives and keeps, in one place, each with its reason. (What it
/// sends is bounded by HearthCore's ``Limits``, which the server enforces too.)
enum ClientLimits {
    /// Largest message from the server, reassembled from its frames: Firebase documents 256 MB as the
    /// most one read can return; a server sending more is cut off and reconnected to.
    static let messageBytesMax = 256 << 20
    /// Longest the SDK waits between connection attempts; the first wait is about a second (§1.9).
    static let reconnectDelaySecondsMax = 30.0
    static let reconnectDelaySecondsMin = 1.0
    /// Transactions run again at most this many times on stale data (Firebase's 25).
    static let transactionRetriesMax = 25
    /// The disk cache's size bounds (Firebase's documented 1–100 MB), and its default.
    static let cacheSizeBytesRange: ClosedRange<UInt> = (1 << 20)...(100 << 20)
    static let cacheSizeBytesDefault: UInt = 10 << 20
}
