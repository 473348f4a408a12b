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
    /// How the write came: `rest`, `realtime`, `on_disconnect`.
    public var channel: String

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

/// A write as the change feed keeps it: the server's note and what each location it changed held before.
/// It rides on the write's ``WriteBatch`` and is encoded by the engine, on its storage thread, into the
/// same transaction as the records: the feed has a write exactly when storage has it.
public struct ChangeFeedRecord: Sendable, Equatable {
    public var note: ChangeFeedNote
    /// Each location the write changed and its value before (empty: nothing was there).
    public var before: [ChangeFeedValue]

    public init(note: ChangeFeedNote, before: [ChangeFeedValue]) {
        self.note = note
        self.before = before
    }

    /// The record of a write the tree made with `changes`: what each changed location held before, and
    /// the written values as stored, server values (`{".sv":"timestamp"}`) resolved.
    public init(note: ChangeFeedNote, changes: ChangeSet) {
        var note = note
        switch note.data {
        case .set where changes.changes.count == 1 && changes.changes[0].path == note.path:
            note.data = .set(changes.changes[0].new)
        case .update(let values) where values.count == changes.changes.count:
            let stored = zip(values, changes.changes).map { value, change in
                change.path == note.path.appending(path: value.path) ? ChangeFeedValue(path: value.path, value: change.new) : value
            }
            note.data = .update(stored)
        default: break
        }
        self.init(note: note, before: changes.changes.map { ChangeFeedValue(path: $0.path, value: $0.old) })
    }

    /// The entry as the feed stores and serves it, without its position: a JSON object,
    ///
    ///     {"time":…,"type":"set","path":"/jokes/j1","data":{…},"authType":"app_user","authId":"ada",
    ///      "protocol":"rest","before":{"/jokes/j1":null}}
    ///
    /// `before` maps each changed location to its earlier value; when those values take more than
    /// `beforeBytesMax` bytes of JSON they are left out (`"before":null,"beforeOmitted":true`). Values are
    /// in Firebase's export format (priorities kept).
    public func json(beforeBytesMax: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        out += Array(#"{"time":"#.utf8)
        out += Array(String(note.time).utf8)
        switch note.data {
        case .set: out += Array(#","type":"set","path":"#.utf8)
        case .update: out += Array(#","type":"update","path":"#.utf8)
        }
        Self.appendString("/" + note.path.description, to: &out)
        out += Array(#","data":"#.utf8)
        switch note.data {
        case .set(let value): value.appendJSON(to: &out, format: .export)
        case .update(let values): Self.appendObject(values, keyPrefix: "", to: &out)
        }
        out += Array(#","authType":""#.utf8)
        out += Array(note.authType.rawValue.utf8)
        out += Array("\"".utf8)
        if let authId = note.authId {
            out += Array(#","authId":"#.utf8)
            Self.appendString(authId, to: &out)
        }
        out += Array(#","protocol":"#.utf8)
        Self.appendString(note.channel, to: &out)
        var before: [UInt8] = []
        Self.appendObject(self.before, keyPrefix: "/", to: &before, stopAfter: beforeBytesMax)
        if before.count > beforeBytesMax {
            out += Array(#","before":null,"beforeOmitted":true}"#.utf8)
        } else {
            out += Array(#","before":"#.utf8)
            out += before
            out.append(UInt8(ascii: "}"))
        }
        return out
    }

    /// `{"path":value,…}` with every value, nulls included (a tree's object would drop them); stops
    /// adding values once past `stopAfter` bytes.
    private static func appendObject(
        _ values: [ChangeFeedValue], keyPrefix: String, to out: inout [UInt8], stopAfter: Int = .max
    ) {
        let start = out.count
        out.append(UInt8(ascii: "{"))
        for (index, entry) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendString(keyPrefix + entry.path.description, to: &out)
            out.append(UInt8(ascii: ":"))
            entry.value.appendJSON(to: &out, format: .export)
            if out.count - start > stopAfter { break }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A JSON string, escaped as the tree's own strings are.
    private static func appendString(_ string: String, to out: inout [UInt8]) {
        Node(string).appendJSON(to: &out, format: .rest)
    }
}
