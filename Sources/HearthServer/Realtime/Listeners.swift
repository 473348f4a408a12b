import HearthCore
import HearthProtocol

/// Who listens to one namespace: its realtime sessions (by id and by handshake id, for a reconnect's
/// `ls`), each session's listens (a ``ListenTable``: what it answered, within its limit), and the
/// ``FanOut`` every listen and SSE stream is subscribed in. The one owner of all of it: a listen is
/// added, replaced and removed here, in the table and the fan-out together, so they cannot drift apart;
/// everyone else reads. Loop thread only.
final class Listeners {
    private var sessions: [UInt64: RealtimeSession] = [:]
    private var sessionsByHandshake: [String: UInt64] = [:]
    private var tables: [UInt64: ListenTable] = [:]
    /// What a committed write is sent to (read by ``Namespace/publish(_:)``).
    private(set) var fanOut = FanOut()

    /// Open realtime sessions.
    var realtimeSessions: Dictionary<UInt64, RealtimeSession>.Values { sessions.values }
    var realtimeSessionCount: Int { sessions.count }
    /// Subscriptions: every realtime listen and every SSE stream.
    var subscriptionCount: Int { fanOut.count }

    /// The open session whose handshake id (`s`) a reconnecting client names in `ls`.
    func session(handshakeID: String) -> RealtimeSession? { sessionsByHandshake[handshakeID].flatMap { sessions[$0] } }

    // MARK: Realtime sessions

    /// The session serves this namespace from now on.
    func attach(_ session: RealtimeSession) {
        sessions[session.id] = session
        sessionsByHandshake[session.sessionID] = session.id
        tables[session.id] = ListenTable(limit: ServerLimits.listensPerConnectionMax)
    }

    /// The session closed: it is forgotten with its listens.
    func detach(_ session: RealtimeSession) {
        if var table = tables.removeValue(forKey: session.id) {
            for listen in table.removeAll() { fanOut.unsubscribe(Self.key(session, listen.key)) }
        }
        sessions[session.id] = nil
        if sessionsByHandshake[session.sessionID] == session.id { sessionsByHandshake[session.sessionID] = nil }
    }

    /// Whether a listen at `key` would be taken: it replaces one, or the session has room.
    func admits(_ session: RealtimeSession, _ key: ListenTable.Key) -> Bool { tables[session.id]?.admits(key) ?? false }

    func listenLimit(_ session: RealtimeSession) -> Int { tables[session.id]?.limit ?? 0 }

    /// Adds (or replaces) a listen of `session`, seeing `window` now.
    func listen(_ session: RealtimeSession, _ listen: ListenTable.Listen, window: Node) -> ListenTable.Addition {
        // Changed in place: a copy of the table out of the dictionary would copy its listens on every add.
        guard let addition = tables[session.id]?.add(listen) else { return .overLimit }
        guard addition != .overLimit else { return addition }
        fanOut.subscribe(
            Self.key(session, listen.key),
            FanOut.Subscription(target: session, encoding: .realtime(tag: listen.tag), params: listen.params, window: window))
        return addition
    }

    /// Removes a listen (`n`); nothing when there was none.
    func unlisten(_ session: RealtimeSession, _ key: ListenTable.Key) {
        guard case .some(.some) = tables[session.id]?.remove(key) else { return }
        fanOut.unsubscribe(Self.key(session, key))
    }

    /// Removes and returns the session's listens `mayRead` no longer allows (a new credential, new rules).
    func removeUnreadable(_ session: RealtimeSession, mayRead: (ListenTable.Listen) -> Bool) -> [ListenTable.Listen] {
        guard tables[session.id]?.isEmpty == false else { return [] }
        let removed = tables[session.id]?.removeUnreadable(mayRead) ?? []
        for listen in removed { fanOut.unsubscribe(Self.key(session, listen.key)) }
        return removed
    }

    /// How many listens `session` holds.
    func listenCount(_ session: RealtimeSession) -> Int { tables[session.id]?.count ?? 0 }

    private static func key(_ session: RealtimeSession, _ key: ListenTable.Key) -> FanOut.Key {
        FanOut.Key(subscriber: session.id, location: key.path, tag: key.tag)
    }

    // MARK: SSE streams

    func subscribe(_ stream: EventStream) {
        subscribe(stream.key, FanOut.Subscription(
            target: stream, encoding: .sse(exportFormat: stream.exportFormat), params: stream.params, window: stream.initialWindow))
    }

    /// A subscription of a target that is not a realtime session's listen (a stream; tests' targets).
    func subscribe(_ key: FanOut.Key, _ subscription: FanOut.Subscription) { fanOut.subscribe(key, subscription) }

    func unsubscribe(_ stream: EventStream) { fanOut.unsubscribe(stream.key) }

    /// Fan-out plans: the subscriptions' windows move on with each write (FanOut.plan is mutating).
    func plan(_ change: CommittedChange) -> [FanOut.Delivery] { fanOut.plan(change) }
}
