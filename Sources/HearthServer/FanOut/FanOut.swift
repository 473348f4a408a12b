import HearthCore
import HearthProtocol
import HearthWire

/// What receives a namespace's fan-out: an SSE stream, or a realtime session (one per listen it holds).
protocol FanOutTarget: AnyObject {
    /// Queues `messages` in order. False when the target is over its outbound budget
    /// (ServerLimits.outboundBytesPerConnectionMax) and must be cut off.
    func deliver(_ messages: [[UInt8]]) -> Bool
    /// Drops the target at once, queued messages and all (ARCHITECTURE.md, "Slow readers"): nobody else waits for it.
    func disconnectSlowReader()
}

/// Who listens where in one namespace, and what one committed change sends each of them: the single
/// place a write becomes SSE events and realtime pushes.
///
/// A value: it decides and returns deliveries; ``Namespace/publish(_:)`` sends them and cuts off the
/// targets too slow to take them. Subscriptions live in a trie of locations, so a write visits only
/// the locations it can change (those at or above a location it writes, and those below one), each
/// once, and encodes one message per location and encoding however many listen there (9,000
/// listeners on one path cost one encoding per write, not 9,000). Loop thread only.
struct FanOut {
    /// One subscription: a realtime listen (a session, a location and a query tag) or an SSE stream.
    struct Key: Hashable {
        var subscriber: UInt64
        var location: Path
        var tag: Int64?
    }

    /// How a subscription wants its messages.
    enum Encoding: Equatable {
        /// `put`/`patch` events; `exportFormat` keeps priorities (`format=export`).
        case sse(exportFormat: Bool)
        /// `d`/`m` pushes; `tag` is a query listen's tag.
        case realtime(tag: Int64?)
    }

    struct Subscription {
        let target: any FanOutTarget
        let encoding: Encoding
        /// A query's parameters: the subscription sees only its window, sent again whole when it changes.
        let params: QueryParams?
        /// The window as last sent (query subscriptions only).
        var window: Node
    }

    /// One target's messages for one of its subscriptions.
    struct Delivery {
        let target: any FanOutTarget
        let messages: [[UInt8]]
    }

    private struct Slot: Hashable {
        var subscriber: UInt64
        var tag: Int64?
    }

    /// One location of the trie and everything below it.
    private struct Location {
        var here: [Slot: Subscription] = [:]
        var children: [ChildKey: Location] = [:]
    }

    private var root = Location()
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    // MARK: Subscribing

    /// Adds or replaces the subscription at `key`.
    mutating func subscribe(_ key: Key, _ subscription: Subscription) {
        if Self.insert(subscription, at: key.location.keys[...], slot: Slot(subscriber: key.subscriber, tag: key.tag), in: &root) {
            count += 1
        }
    }

    mutating func unsubscribe(_ key: Key) {
        if Self.remove(at: key.location.keys[...], slot: Slot(subscriber: key.subscriber, tag: key.tag), in: &root) {
            count -= 1
        }
    }

    func subscription(_ key: Key) -> Subscription? {
        var location = root
        for childKey in key.location.keys {
            guard let next = location.children[childKey] else { return nil }
            location = next
        }
        return location.here[Slot(subscriber: key.subscriber, tag: key.tag)]
    }

    private static func insert(_ subscription: Subscription, at keys: ArraySlice<ChildKey>, slot: Slot, in location: inout Location) -> Bool {
        guard let first = keys.first else { return location.here.updateValue(subscription, forKey: slot) == nil }
        return insert(subscription, at: keys.dropFirst(), slot: slot, in: &location.children[first, default: Location()])
    }

    private static func remove(at keys: ArraySlice<ChildKey>, slot: Slot, in location: inout Location) -> Bool {
        guard let first = keys.first else { return location.here.removeValue(forKey: slot) != nil }
        guard location.children[first] != nil else { return false }
        let removed = remove(at: keys.dropFirst(), slot: slot, in: &location.children[first, default: Location()])
        if let child = location.children[first], child.here.isEmpty && child.children.isEmpty { location.children[first] = nil }
        return removed
    }

    // MARK: Planning

    /// The deliveries `change` causes, in trie order. Query subscriptions it changed remember their new
    /// window. A location reached by several of the write's paths is planned once.
    mutating func plan(_ change: CommittedChange) -> [Delivery] {
        guard count > 0 else { return [] }
        var deliveries: [Delivery] = []
        let locations = change.write.locations
        if locations.count == 1 {
            Self.plan(change, writtenAt: locations[0], depth: 0, in: &root, into: &deliveries)
        } else {
            Self.plan(change, written: locations.map { $0.keys[...] }, at: .root, in: &root, into: &deliveries)
        }
        return deliveries
    }

    /// ``plan(_:written:at:in:into:)`` for a write at one location (nearly every write): no grouping,
    /// and the path of a location above it is made only where someone subscribes.
    private static func plan(
        _ change: CommittedChange, writtenAt target: Path, depth: Int, in location: inout Location,
        into deliveries: inout [Delivery]
    ) {
        guard depth < target.count else {
            planSubtree(change, at: target, in: &location, into: &deliveries)
            return
        }
        if !location.here.isEmpty {
            planHere(change, at: Path(Array(target.keys.prefix(depth))), in: &location, into: &deliveries)
        }
        let key = target.keys[depth]
        guard location.children[key] != nil else { return }
        plan(change, writtenAt: target, depth: depth + 1, in: &location.children[key, default: Location()], into: &deliveries)
    }

    /// `location` is above every path in `written` (relative to it), or is one of them when one is empty.
    private static func plan(
        _ change: CommittedChange, written: [ArraySlice<ChildKey>], at path: Path, in location: inout Location,
        into deliveries: inout [Delivery]
    ) {
        if written.contains(where: \.isEmpty) {
            // Written here: this location and everything below it may have changed.
            planSubtree(change, at: path, in: &location, into: &deliveries)
            return
        }
        planHere(change, at: path, in: &location, into: &deliveries)
        var byChild: [ChildKey: [ArraySlice<ChildKey>]] = [:]
        for keys in written {
            guard let first = keys.first else { continue }
            byChild[first, default: []].append(keys.dropFirst())
        }
        for (key, rest) in byChild where location.children[key] != nil {
            plan(change, written: rest, at: path.appending(key), in: &location.children[key, default: Location()], into: &deliveries)
        }
    }

    private static func planSubtree(
        _ change: CommittedChange, at path: Path, in location: inout Location, into deliveries: inout [Delivery]
    ) {
        planHere(change, at: path, in: &location, into: &deliveries)
        for key in Array(location.children.keys) {
            planSubtree(change, at: path.appending(key), in: &location.children[key, default: Location()], into: &deliveries)
        }
    }

    /// The subscriptions at one location. Messages for subscriptions without a query are made once per
    /// encoding, whoever listens there.
    private static func planHere(
        _ change: CommittedChange, at path: Path, in location: inout Location, into deliveries: inout [Delivery]
    ) {
        guard !location.here.isEmpty else { return }
        var realtime: [[UInt8]]?
        var sse: [[UInt8]]?
        var sseExport: [[UInt8]]?
        for index in location.here.indices {
            let subscription = location.here.values[index]
            if let params = subscription.params {
                guard change.write.touches(path) else { continue }
                let window = QueryWindow.node(of: change.root.child(at: path), params: params)
                guard window != subscription.window else { continue }
                location.here.values[index].window = window
                let message: [UInt8]
                switch subscription.encoding {
                case .sse(let exportFormat):
                    message = SSE.event("put", path: .root, data: window, format: exportFormat ? .export : .rest)
                case .realtime(let tag):
                    message = WireEncoder.set(path: path, node: window, tag: tag)
                }
                deliveries.append(Delivery(target: subscription.target, messages: [message]))
                continue
            }
            let messages: [[UInt8]]
            switch subscription.encoding {
            case .realtime:
                if realtime == nil {
                    realtime = change.write.mayReach(path) ? RealtimePushes.pushes(for: change, at: path) : []
                }
                messages = realtime!
            case .sse(exportFormat: false):
                if sse == nil { sse = SSE.event(for: change, at: path, exportFormat: false).map { [$0] } ?? [] }
                messages = sse!
            case .sse(exportFormat: true):
                if sseExport == nil { sseExport = SSE.event(for: change, at: path, exportFormat: true).map { [$0] } ?? [] }
                messages = sseExport!
            }
            if !messages.isEmpty { deliveries.append(Delivery(target: subscription.target, messages: messages)) }
        }
    }
}
