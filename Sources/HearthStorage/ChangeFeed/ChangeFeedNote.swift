public import HearthCore

/// What the server says about a write for the change feed (docs/feed.md): when it was made, what it was,
/// who made it and over which protocol. The engine that keeps the feed adds a position, and the write's
/// batch carries what it replaced (``ChangeFeedRecord``).
public struct ChangeFeedNote: Sendable, Equatable {
    /// What was written.
    public enum Data: Sendable, Equatable {
        /// A value set at `path` (empty: removed); the entry's `type` is `set`.
        case set(Node)
        /// Several locations below `path` at once, each by its path relative to it (an empty value
        /// removes); the entry's `type` is `update`, and its `data` maps each relative path to its value.
        case update([ChangeFeedValue])
    }

    /// Who wrote, as Cloud Functions' database events say it (`authType`).
    public enum AuthType: String, Sendable {
        /// A signed-in user: `authId` is their uid.
        case appUser = "app_user"
        /// The admin token, the console or a service account.
        case admin
        /// Nobody signed in.
        case unauthenticated
    }

    /// When the server took the write (milliseconds since the epoch, the server's clock).
    public var time: Int64
    public var path: Path
    public var data: Data
    public var authType: AuthType
    /// The writer's uid when `authType` is `appUser`.
    public var authId: String?
    /// How the write came: `rest`, `realtime`, `on_disconnect`, `restore` (an offline `hearth restore`).
    public var channel: String
    /// Locations above the written ones whose earlier values the entry keeps too, because a trigger
    /// watches them (docs/functions.md): a hook on `/jokes/{jokeId}` sees the whole joke before and after
    /// a write to `/jokes/j1/votes`. Decided by the server when it takes the write; not stored itself.
    public var contexts: [Path] = []

    public init(
        time: Int64, path: Path, data: Data, authType: AuthType, authId: String? = nil, channel: String
    ) {
        self.time = time
        self.path = path
        self.data = data
        self.authType = authType
        self.authId = authId
        self.channel = channel
    }
}

/// A location and a value: a value an update wrote (relative to its path), or one a write replaced.
public struct ChangeFeedValue: Sendable, Equatable {
    public var path: Path
    /// Empty: nothing (`null`).
    public var value: Node

    public init(path: Path, value: Node) {
        self.path = path
        self.value = value
    }
}

/// A write as the change feed keeps it, as values: the server's note and what each location it changed
/// held before. What tools and tests build entries from; the database makes the stored form straight
/// from the write (``ChangeFeedEntry``).
public final class ChangeFeedRecord: Sendable, Equatable {
    public let note: ChangeFeedNote
    /// Each location the write changed and its value before (empty: nothing was there).
    public let before: [ChangeFeedValue]

    public init(note: ChangeFeedNote, before: [ChangeFeedValue]) {
        self.note = note
        self.before = before
    }

    public static func == (left: ChangeFeedRecord, right: ChangeFeedRecord) -> Bool {
        left === right || (left.note == right.note && left.before == right.before)
    }
}
