import HearthCore
import HearthProtocol
import Testing

@testable import HearthServer

/// The namespace's one record of who listens: a session's listens and the fan-out change together, so a
/// write reaches exactly the listens the sessions were answered for.
struct ListenersTests {
    private func listen(_ path: String, tag: Int64? = nil) -> ListenTable.Listen {
        ListenTable.Listen(path: Path(path), tag: tag, params: tag == nil ? nil : QueryParams(), queryJSON: nil)
    }

    @Test func listensAndTheFanOutChangeTogether() async throws {
        let h = LoopHarness()
        let (first, _) = h.connect()
        let (second, _) = h.connect()
        let listeners = h.namespace.listeners
        let sessions = Array(listeners.realtimeSessions)
        #expect(sessions.count == 2)
        let a = try #require(sessions.first { $0 === (first as AnyObject) })
        let b = try #require(sessions.first { $0 === (second as AnyObject) })

        #expect(listeners.listen(a, listen("x"), window: .empty) == .added)
        #expect(listeners.listen(a, listen("x"), window: .empty) == .replaced)
        #expect(listeners.listen(a, listen("x", tag: 7), window: .empty) == .added)
        #expect(listeners.listen(b, listen("x"), window: .empty) == .added)
        #expect(listeners.listenCount(a) == 2 && listeners.listenCount(b) == 1)
        #expect(listeners.subscriptionCount == 3)

        listeners.unlisten(a, ListenTable.Key(path: Path("x"), tag: 7))
        listeners.unlisten(a, ListenTable.Key(path: Path("never"), tag: nil))
        #expect(listeners.listenCount(a) == 1 && listeners.subscriptionCount == 2)

        let removed = listeners.removeUnreadable(b) { _ in false }
        #expect(removed.map(\.path) == [Path("x")])
        #expect(listeners.listenCount(b) == 0 && listeners.subscriptionCount == 1)

        // Closing a session takes its listens and its `ls` entry with it.
        let handshake = a.sessionID
        #expect(listeners.session(handshakeID: handshake) === a)
        first.closed()
        #expect(listeners.session(handshakeID: handshake) == nil)
        #expect(listeners.realtimeSessionCount == 1 && listeners.subscriptionCount == 0)
        #expect(listeners.listen(a, listen("y"), window: .empty) == .overLimit)  // a closed session listens nowhere
        #expect(listeners.subscriptionCount == 0)
    }
}
