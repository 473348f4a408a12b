public import HearthCore

/// One entry of a namespace's change feed (docs/feed.md), read back from its JSON: what triggers are
/// derived from (``events(at:)``). Null members are kept: in an update's `data` a null is a removal.
///
///     let entry = try FeedEntry(json: bytes)           // one object of `/.feed.json`'s `entries`
///     for event in entry.events(at: pattern) { … }
public struct FeedEntry: Sendable, Equatable {
    public enum Kind: String, Sendable { case set, update }

    public var position: Int64
    /// Milliseconds since the epoch, the server's clock when it took the write.
    public var time: Int64
    public var kind: Kind
    /// Where the write was sent.
    public var path: Path
    /// Each location written and its value as stored (empty: removed). A set has one, at `path`.
    public var changes: [(path: Path, value: Node)]
    /// `app_user`, `admin` or `unauthenticated`.
    public var authType: String
    public var authId: String?
    /// `rest`, `realtime`, `on_disconnect` or `restore`.
    public var channel: String
    /// Locations and what they held before the write: each changed location, and locations above
    /// them that a trigger watched when the write was taken. Empty when ``beforeOmitted``.
    public var before: [(path: Path, value: Node)]
    /// The earlier values were too large to keep (docs/feed.md).
    public var beforeOmitted: Bool

    public init(json bytes: [UInt8]) throws(DataError) {
        var position: Int64?
        var time: Int64?
        var kind: Kind?
        var path: Path?
        var data: Range<Int>?
        var authType = "unauthenticated"
        var authId: String?
        var channel = "rest"
        var before: Range<Int>?
        var beforeOmitted = false
        for member in try JSONMembers(bytes, in: bytes.indices) {
            let value = member.value
            switch member.key {
            case "position": position = try Self.integer(bytes, value, "position")
            case "time": time = try Self.integer(bytes, value, "time")
            case "type":
                guard let parsed = Kind(rawValue: try Self.string(bytes, value, "type")) else {
                    throw DataError(.invalidData, "a feed entry's type is set or update")
                }
                kind = parsed
            case "path": path = Path(try Self.string(bytes, value, "path"))
            case "data": data = value
            case "authType": authType = try Self.string(bytes, value, "authType")
            case "authId": authId = JSONMembers.isNull(bytes, value) ? nil : try Self.string(bytes, value, "authId")
            case "protocol": channel = try Self.string(bytes, value, "protocol")
            case "before": before = JSONMembers.isNull(bytes, value) ? nil : value
            case "beforeOmitted": beforeOmitted = bytes[value].elementsEqual("true".utf8)
            default: break
            }
        }
        guard let position, let time, let kind, let path, let data else {
            throw DataError(.invalidData, "a feed entry needs position, time, type, path and data")
        }
        self.position = position
        self.time = time
        self.kind = kind
        self.path = path
        self.authType = authType
        self.authId = authId
        self.channel = channel
        self.beforeOmitted = beforeOmitted
        switch kind {
        case .set: changes = [(path, try Node(jsonBytes: Array(bytes[data])))]
        case .update:
            changes = []
            for member in try JSONMembers(bytes, in: data) {
                changes.append((path.appending(path: Path(member.key)), try Node(jsonBytes: Array(bytes[member.value]))))
            }
        }
        self.before = []
        if let before {
            for member in try JSONMembers(bytes, in: before) {
                self.before.append((Path(member.key), try Node(jsonBytes: Array(bytes[member.value]))))
            }
        }
    }

    public static func == (left: FeedEntry, right: FeedEntry) -> Bool {
        left.position == right.position && left.time == right.time && left.kind == right.kind && left.path == right.path
            && left.changes.map(\.path) == right.changes.map(\.path) && left.changes.map(\.value) == right.changes.map(\.value)
            && left.authType == right.authType && left.authId == right.authId && left.channel == right.channel
            && left.before.map(\.path) == right.before.map(\.path) && left.before.map(\.value) == right.before.map(\.value)
            && left.beforeOmitted == right.beforeOmitted
    }

    private static func integer(_ bytes: [UInt8], _ range: Range<Int>, _ name: String) throws(DataError) -> Int64 {
        guard range.count <= 20, let number = Int64(String(decoding: bytes[range], as: UTF8.self)) else {
            throw DataError(.invalidData, "a feed entry's \(name) is a whole number")
        }
        return number
    }

    private static func string(_ bytes: [UInt8], _ range: Range<Int>, _ name: String) throws(DataError) -> String {
        guard let string = try Node(jsonBytes: Array(bytes[range])).stringValue else {
            throw DataError(.invalidData, "a feed entry's \(name) is a string")
        }
        return string
    }
}
