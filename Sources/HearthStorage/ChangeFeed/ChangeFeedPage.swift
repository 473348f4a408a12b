/// A stretch of a namespace's change feed, as ``StorageEngine/readFeed(after:limit:completion:)`` reads it.
public struct ChangeFeedPage: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// Where the entry is in the feed: positions grow in commit order, not necessarily by one.
        public var position: Int64
        /// The entry without its position (``ChangeFeedRecord/json(beforeBytesMax:)``).
        public var json: [UInt8]

        public init(position: Int64, json: [UInt8]) {
            self.position = position
            self.json = json
        }

        /// The entry as served, its position first: `{"position":N,` spliced in front of the stored
        /// object's fields, never parsed again.
        public func appendServed(to out: inout [UInt8]) {
            out.append(contentsOf: #"{"position":\#(position),"#.utf8)
            out.append(contentsOf: json.dropFirst())
        }
    }

    /// In position order, all after the position asked for.
    public var entries: [Entry]
    /// The last position retention removed (0: none yet). A reader whose position is below it missed
    /// entries and must read the data again instead (`resync needed`).
    public var trimmedThrough: Int64
    /// The position of the newest entry when the page was read (0: the feed is empty); nil when the
    /// engine does not say. Where a new reader that wants only what comes next starts (webhooks do).
    public var head: Int64?

    public init(entries: [Entry], trimmedThrough: Int64, head: Int64? = nil) {
        self.entries = entries
        self.trimmedThrough = trimmedThrough
        self.head = head
    }

    /// Whether a reader at `position` missed entries that retention removed.
    public func needsResync(after position: Int64) -> Bool { position < trimmedThrough }
}

/// Positions of the feed: an engine that commits groups numbers each commit, and each entry is its
/// commit's number times ``entriesPerCommitMax`` plus its index in the commit. So positions grow in commit
/// order, and a reader's position finds its commit without a lookup.
public enum ChangeFeedPosition {
    /// Most entries one commit may hold (a commit with more is stored as several).
    public static let entriesPerCommitMax = 8192
    /// Bits of a position that hold the entry's index in its commit.
    public static let indexBits = 13
    static let shift = Int64(indexBits)

    /// The position of the `index`th entry of commit number `commit` (from 1).
    public static func of(commit: Int64, index: Int) -> Int64 {
        precondition(index >= 0 && index < entriesPerCommitMax, "an entry index beyond a commit's")
        return commit << shift | Int64(index)
    }

    /// The commit a position belongs to.
    public static func commit(of position: Int64) -> Int64 { position >> shift }
}

/// How long a namespace's change feed keeps entries: the oldest go once they are older than `maxAge`
/// or once the feed holds more than `maxBytes`, whichever comes first (docs/feed.md).
public struct ChangeFeedRetention: Sendable, Equatable {
    public var maxAgeMilliseconds: Int64
    public var maxBytes: Int64
    /// Above this many bytes of JSON, an entry's earlier values are left out (`beforeOmitted`).
    public var beforeBytesMax: Int

    public init(maxAgeMilliseconds: Int64, maxBytes: Int64, beforeBytesMax: Int = ChangeFeedRetention.standard.beforeBytesMax) {
        self.maxAgeMilliseconds = maxAgeMilliseconds
        self.maxBytes = maxBytes
        self.beforeBytesMax = beforeBytesMax
    }

    /// Seven days or 1 GiB per namespace; earlier values up to 256 KiB per entry.
    public static let standard = ChangeFeedRetention(
        maxAgeMilliseconds: 7 * 24 * 3_600_000, maxBytes: 1 << 30, beforeBytesMax: 256 << 10)
}
