public import HearthCore

/// One change in a location's history (docs/feed.md, "History of a location"): a write that changed the
/// location or something below it, with what it held before and after. A write at or above the location
/// is narrowed to it (its value before and after, the whole location); a write below it is shown where
/// it was made (the location itself held more than the feed keeps).
public struct LocationChange: Sendable, Equatable {
    public var position: Int64
    public var time: Int64
    /// The location shown: the one asked about, or the deeper one written.
    public var path: Path
    public var before: Node
    public var after: Node
    /// The feed did not keep the earlier value (too large): `before` is unknown, not empty.
    public var beforeOmitted: Bool
    /// `set` or `update`, as the write was sent.
    public var type: String
    public var authType: String
    public var authId: String?
    public var channel: String

    /// The change as JSON: `{"position","time","path","type","before","after","authType","authId"?,"protocol"}`.
    public var json: String {
        var out = "{\"position\":\(position),\"time\":\(time),\"path\":\(Node(path.slashed).json()),\"type\":\"\(type)\""
        out += beforeOmitted ? ",\"before\":null,\"beforeOmitted\":true" : ",\"before\":\(before.json(.export))"
        out += ",\"after\":\(after.json(.export)),\"authType\":\(Node(authType).json())"
        if let authId { out += ",\"authId\":\(Node(authId).json())" }
        return out + ",\"protocol\":\(Node(channel).json())}"
    }
}

extension FeedEntry {
    /// The changes this entry made at `location` or below it, in the order of its changes (a set makes
    /// at most one; an update one per location it wrote below `location`, or one for a location it
    /// wrote at or above). Nothing when the entry left them as they were.
    public func history(at location: Path) -> [LocationChange] {
        var found: [LocationChange] = []
        func change(at path: Path, before: Node, after: Node) -> LocationChange {
            LocationChange(
                position: position, time: time, path: path, before: before, after: after, beforeOmitted: beforeOmitted,
                type: kind.rawValue, authType: authType, authId: authId, channel: channel)
        }
        if changes.contains(where: { location.relative(to: $0.path) != nil }) {
            // Written at or above the location: the location's whole value before and after.
            let before = value(before: location)
            let after = value(after: location, before: before)
            if before != after || beforeOmitted { found.append(change(at: location, before: before, after: after)) }
        }
        for written in changes where written.path != location && written.path.relative(to: location) != nil {
            let before = value(before: written.path)
            if before != written.value || beforeOmitted { found.append(change(at: written.path, before: before, after: written.value)) }
        }
        return found
    }
}
