public import HearthCore

/// A namespace as it was at an earlier moment, from its data now and its change feed (docs/operations.md,
/// "Point-in-time restore"): every write after that moment undone, newest first, by setting each location
/// it changed back to the value the feed kept from before it. Undoing sets absolute values, so writes the
/// data does not hold yet (made after it was read, before the feed was) undo to the same result.
public enum FeedRestore {
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Where a restore goes back to.
    public enum Moment: Sendable, Equatable {
        /// After every write the server took at or before this time (ms since the epoch): the writes from
        /// the first one the feed records as taken later are undone.
        case time(Int64)
        /// Just before the entry at this position (it and everything after it undone).
        case beforePosition(Int64)
    }

    /// The first entry (of `entries`, in feed order) that `moment` undoes; nil when it undoes none.
    public static func firstUndone(_ entries: [FeedEntry], at moment: Moment) -> Int? {
        switch moment {
        case .time(let time): entries.firstIndex { $0.time > time }
        case .beforePosition(let position): entries.firstIndex { $0.position >= position }
        }
    }

    /// `root` with `entries` (in feed order, the newest last) undone newest first.
    ///
    /// - Throws: ``Failure`` when an entry's earlier values were too large for the feed to keep.
    public static func undo(_ entries: ArraySlice<FeedEntry>, on root: Node) throws(Failure) -> Node {
        var restored = root
        for entry in entries.reversed() {
            guard !entry.beforeOmitted else {
                throw Failure(
                    "the write at position \(entry.position) (\(entry.path.slashed)) replaced values larger than the feed keeps (beforeBytesMax), so the data before it cannot be rebuilt from the feed")
            }
            // All of an entry's earlier values are from the same instant: any order gives that state.
            for replaced in entry.before { _ = restored.set(replaced.path, to: replaced.value) }
        }
        return restored
    }
    /// `root` with `entries` (in feed order) done again, oldest first: each location an entry wrote set to
    /// the value it stored. The other direction from ``undo(_:on:)``: from a backup forward to a later
    /// moment. Values are absolute, so doing an entry the data already holds again changes nothing, as
    /// long as the entries after it are done too (a backup read while writes went on is caught up this
    /// way). A server value the feed kept unresolved (a write that changed nothing) is resolved as the
    /// server did, at the entry's time.
    ///
    /// - Throws: ``Failure`` when an entry holds a server value that does not resolve.
    public static func redo(_ entries: ArraySlice<FeedEntry>, on root: Node) throws(Failure) -> Node {
        var restored = root
        for entry in entries {
            for change in entry.changes {
                let value: Node
                do { value = try ServerValues.resolve(change.value, at: change.path, in: restored, now: entry.time) } catch {
                    throw Failure("the write at position \(entry.position) (\(change.path.slashed)) holds a server value that does not resolve: \(error.message)")
                }
                _ = restored.set(change.path, to: value)
            }
        }
        return restored
    }
}

extension FeedEntry {
    /// A page of `/.feed.json` (`{"entries":[…],"next":N,"trimmedThrough":T}`): its entries, each read as
    /// ``init(json:)`` reads one, and the last position retention removed.
    public static func page(json bytes: [UInt8]) throws(DataError) -> (entries: [FeedEntry], trimmedThrough: Int64) {
        var entries: [FeedEntry] = []
        var trimmedThrough: Int64 = 0
        for member in try JSONMembers(bytes, in: bytes.indices) {
            switch member.key {
            case "trimmedThrough":
                guard let value = Int64(String(decoding: bytes[member.value], as: UTF8.self)) else {
                    throw DataError(.invalidData, "a feed page's trimmedThrough is a whole number")
                }
                trimmedThrough = value
            case "entries":
                for element in try JSONMembers.elements(bytes, in: member.value) { entries.append(try FeedEntry(json: Array(bytes[element]))) }
            default: break
            }
        }
        return (entries, trimmedThrough)
    }
}
