import HearthCore

/// Which listener a raised event is for: the handle `observe` returned.
typealias RegistrationID = UInt

/// A view's identity: a location and the query at it (the index matters: it orders the events).
struct QuerySpec: Hashable, Sendable, CustomStringConvertible {
    var path: Path
    var query: WireQuery

    init(path: Path, query: WireQuery = WireQuery()) {
        self.path = path
        self.query = query
    }

    /// Served by the location's default listen (no range, no limit, whatever the order).
    var isDefault: Bool { query.loadsAllData }
    var description: String { "\(path.slashed) \(query.identifier)" }
}

/// A server listen: a location and, for a filtered query, its tag (docs/protocol.md §2.4).
struct ListenKey: Hashable, Sendable {
    var path: Path
    var tag: Int64?
}

/// What a listener asked for: one event type.
enum ListenEventType: Sendable, Equatable {
    case value, childAdded, childChanged, childRemoved, childMoved
    /// Keeps the view alive and its data synced, with no events (`keepSynced`, transactions).
    case none

    init(_ type: EventType) {
        switch type {
        case .value: self = .value
        case .childAdded: self = .childAdded
        case .childChanged: self = .childChanged
        case .childRemoved: self = .childRemoved
        case .childMoved: self = .childMoved
        }
    }
}

/// An event for one listener, ready to become a snapshot.
struct RaisedEvent: Sendable {
    var registration: RegistrationID
    var type: EventType
    /// Where the snapshot is: the view's location, or the child's for child events.
    var path: Path
    var node: Node
    var previousKey: ChildKey?
    /// The view's order: the snapshot enumerates its children in it.
    var index: QueryIndex
}

/// What one operation on the sync tree asks of its caller: events to raise, listeners whose listen
/// failed, and listens to start or stop on the server.
struct SyncOutput: Sendable {
    var events: [RaisedEvent] = []
    var cancelled: [(registration: RegistrationID, status: String, reason: String?)] = []
    var listens: [ListenChange] = []

    mutating func append(_ other: SyncOutput) {
        events += other.events
        cancelled += other.cancelled
        listens += other.listens
    }
}

enum ListenChange: Sendable {
    case start(ListenKey, WireQuery?, hash: String)
    case stop(ListenKey, WireQuery?)
}
