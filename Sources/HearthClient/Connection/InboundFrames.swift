import Dispatch
import HearthSupport
import HearthWire

/// A transport's event as the repo's queue receives it: frames already assembled and parsed.
enum InboundEvent: Sendable {
    case opened
    case message(ServerMessage)
    /// A frame the assembler refused (a broken stream): the connection is reset.
    case unreadable
    case closed
}

/// Assembles and parses one transport's frames on the thread that delivers them (libwebsockets' thread,
/// URLSession's callbacks), so the repo's queue, where an app's writes raise their local events, spends no
/// time on JSON. One decoder per transport: its frames arrive one after another.
final class InboundDecoder: Sendable {
    private let assembler = Locked(WireFrameAssembler(messageBytesMax: ClientLimits.messageBytesMax))

    /// The event to hand on; nil for a frame that only continues a message, or a message the client does
    /// not recognise (ignored, as the SDKs ignore them).
    func decode(_ event: TransportEvent) -> InboundEvent? {
        switch event {
        case .opened:
            return .opened
        case .closed:
            return .closed
        case .message(let frame):
            let message: [UInt8]?
            do { message = try assembler.withLock { try $0.receive(frame) } } catch { return .unreadable }
            return message.flatMap(ServerMessage.parse).map(InboundEvent.message)
        }
    }
}

/// Carries a transport's events onto the repo's queue one at a time: each event is a queue item of its
/// own, queued only when the one before it has run, so a `setValue` arriving meanwhile (a `sync` onto the
/// queue) waits for at most one server message, never for a backlog of them.
final class InboundInbox: Sendable {
    private let queue: DispatchQueue
    private let handle: @Sendable (InboundEvent) -> Void
    private let waiting = Locked<[InboundEvent]>([])

    init(queue: DispatchQueue, handle: @escaping @Sendable (InboundEvent) -> Void) {
        self.queue = queue
        self.handle = handle
    }

    /// From the transport's thread.
    func put(_ event: InboundEvent) {
        let first = waiting.withLock { events in
            events.append(event)
            return events.count == 1
        }
        if first { queue.async { self.runOne() } }
    }

    private func runOne() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let event = waiting.withLock({ $0.first }) else { return }
        handle(event)
        let more = waiting.withLock { events in
            events.removeFirst()
            return !events.isEmpty
        }
        if more { queue.async { self.runOne() } }
    }
}
