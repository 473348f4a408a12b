public import HearthCore

/// What happened at one location a trigger watches, derived from a feed entry: Cloud Functions'
/// `onValueCreated`, `onValueUpdated`, `onValueDeleted` (and `onValueWritten`, any of the three).
public struct TriggerEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case created, updated, deleted
    }

    /// Stable for the same entry and location, across retries and restarts: `POSITION-INDEX`, the
    /// entry's position and the event's index among those the entry makes at this pattern.
    public var id: String
    public var position: Int64
    public var kind: Kind
    /// The location that matched the pattern.
    public var location: Path
    public var parameters: [String: String]
    /// The whole location before and after the write (empty: nothing there).
    public var before: Node
    public var after: Node
    /// The earlier value was too large for the feed to keep: `before` is empty although something
    /// may have been there (and `kind` is then `created` or `updated` as best known).
    public var beforeOmitted: Bool
    public var time: Int64
    public var authType: String
    public var authId: String?
    public var channel: String
}

extension FeedEntry {
    /// The events the entry makes at locations `pattern` matches, in key order of location: one per
    /// matching location whose value the write changed.
    public func events(at pattern: TriggerPattern) -> [TriggerEvent] {
        var locations: [Path] = []
        var seen = Set<Path>()
        for change in changes {
            if change.path.count >= pattern.depth {
                guard pattern.matchesPrefix(of: change.path) else { continue }
                let location = Path(Array(change.path.keys.prefix(pattern.depth)))
                if seen.insert(location).inserted { locations.append(location) }
            } else {
                // A write above the pattern's depth: every matching location below it, before or after.
                for location in Self.locations(below: change.path, matching: pattern, in: [value(before: change.path), change.value])
                where seen.insert(location).inserted {
                    locations.append(location)
                }
            }
        }
        locations.sort()
        var events: [TriggerEvent] = []
        for location in locations {
            guard let parameters = pattern.parameters(of: location) else { continue }
            let before = value(before: location)
            let after = value(after: location, before: before)
            guard before != after else { continue }
            let kind: TriggerEvent.Kind = before.isEmpty ? .created : after.isEmpty ? .deleted : .updated
            events.append(
                TriggerEvent(
                    id: "\(position)-\(events.count)", position: position, kind: kind, location: location, parameters: parameters,
                    before: before, after: after, beforeOmitted: beforeOmitted, time: time, authType: authType, authId: authId,
                    channel: channel))
        }
        return events
    }

    /// What `location` held before the write: from the earlier value recorded at it or above it (the
    /// feed keeps one wherever a trigger watched when the write was taken). Empty when none covers it.
    public func value(before location: Path) -> Node {
        for entry in before where entry.path.contains(location) {
            return entry.value.child(at: location.relative(to: entry.path) ?? .root)
        }
        return .empty
    }

    /// What `location` holds after the write, given what it held before.
    func value(after location: Path, before: Node) -> Node {
        var value = before
        for change in changes {
            if let below = location.relative(to: change.path) {
                value = change.value.child(at: below)
            } else if let inside = change.path.relative(to: location) {
                value.set(inside, to: change.value)
            }
        }
        return value
    }

    /// The locations `depth` deep under `path` that match `pattern` and hold something in one of `values`
    /// (each the value at `path`).
    static func locations(below path: Path, matching pattern: TriggerPattern, in values: [Node]) -> [Path] {
        guard pattern.depth > path.count else { return [] }
        for (index, key) in path.keys.enumerated() {
            if case .key(let literal) = pattern.segments[index], literal != key { return [] }
        }
        var found: [Path] = []
        func walk(_ at: Path, _ nodes: [Node]) {
            if at.count == pattern.depth {
                found.append(at)
                return
            }
            switch pattern.segments[at.count] {
            case .key(let key):
                let children = nodes.map { $0.child(key) }.filter { !$0.isEmpty }
                if !children.isEmpty { walk(at.appending(key), children) }
            case .parameter:
                var keys = Set<ChildKey>()
                for node in nodes { for (key, _) in node.children { keys.insert(key) } }
                for key in keys { walk(at.appending(key), nodes.map { $0.child(key) }.filter { !$0.isEmpty }) }
            }
        }
        walk(path, values.filter { !$0.isEmpty })
        return found
    }
}
