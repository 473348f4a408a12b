import HearthCore
import HearthStorage

/// storage.write.feed's writes, which feed.entry makes entries of too: 64 writers, 2,000 writes each to
/// their own new keys `bench/wN/kM`, 100-byte values, each writer signed in (`userN`) over realtime.
enum FeedWorkload {
    static let writers = 64
    static let writesPerWriter = 2_000
    static let total = writers * writesPerWriter
    static let value = Node(String(repeating: "v", count: 100))
    /// Each writer's uid, made once, as the server holds a caller's (its token's claims).
    static let uids = (0..<writers).map { "user\($0)" }

    static func path(writer: Int, index: Int) -> Path { Path("bench/w\(writer)/k\(index)") }

    /// The note the server makes of `writer`'s write to `path`.
    static func note(writer: Int, path: Path) -> ChangeFeedNote {
        ChangeFeedNote(time: 1_796_000_000_000, path: path, data: .set(value), authType: .appUser, authId: uids[writer], channel: "realtime")
    }
}
