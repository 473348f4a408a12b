#if canImport(HearthWebSocketClient)
    import Foundation
    import HearthWebSocketClient

    /// The realtime transport on Linux: HearthWebSocketClient's libwebsockets client.
    final class LWSTransport: RealtimeTransport, @unchecked Sendable {  // `socket` is itself thread-safe
        private let socket: WebSocketClient

        init(url: URL, events: @escaping @Sendable (TransportEvent) -> Void) {
            let trusted = ProcessInfo.processInfo.environment["HEARTH_TRUSTED_CERTIFICATES"]
            socket = WebSocketClient(url: url, trustedCertificatesFile: trusted) { event in
                switch event {
                case .opened: events(.opened)
                case .message(let bytes): events(.message(bytes))
                case .closed(let reason): events(.closed(reason: reason))
                }
            }
        }

        func connect() { socket.connect() }
        func send(_ text: [UInt8]) { socket.send(text) }
        func close() { socket.close() }
    }
#endif
