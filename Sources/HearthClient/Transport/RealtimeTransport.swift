import Foundation

/// What a transport reports, in order.
enum TransportEvent: Sendable {
    case opened
    /// One text frame.
    case message([UInt8])
    case closed(reason: String)
}

/// One connection to the realtime endpoint (a WebSocket): the seam between the protocol and the
/// platform. libwebsockets' client on Linux (``LWSTransport``), URLSession's WebSocket task on Apple
/// platforms (``URLSessionTransport``), an in-memory double in tests.
protocol RealtimeTransport: AnyObject, Sendable {
    /// Starts connecting; ``TransportEvent/opened`` or ``TransportEvent/closed(reason:)`` follows.
    func connect()
    /// Queues one text frame.
    func send(_ text: [UInt8])
    /// Closes the connection; ``TransportEvent/closed(reason:)`` follows unless it already was.
    func close()
}

/// Makes the transport for one connection attempt: the URL, and where its events go (any thread).
typealias TransportFactory = @Sendable (URL, @escaping @Sendable (TransportEvent) -> Void) -> any RealtimeTransport

enum Transports {
    /// The platform's WebSocket client.
    static let platform: TransportFactory = { url, events in
        #if canImport(HearthWebSocketClient)
            return LWSTransport(url: url, events: events)
        #else
            return URLSessionTransport(url: url, events: events)
        #endif
    }
}
