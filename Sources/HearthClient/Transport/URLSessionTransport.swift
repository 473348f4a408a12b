import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The realtime transport on Apple platforms: URLSession's WebSocket task. Compiled on Linux too, against
/// FoundationNetworking, so that every build checks it (there, Debian's libcurl has no WebSocket support and
/// the task fails at once: Linux uses ``LWSTransport``).
final class URLSessionTransport: RealtimeTransport, @unchecked Sendable {  // the task is thread-safe
    private let task: URLSessionWebSocketTask
    private let events: @Sendable (TransportEvent) -> Void

    init(url: URL, events: @escaping @Sendable (TransportEvent) -> Void) {
        task = URLSession.shared.webSocketTask(with: url)
        self.events = events
    }

    func connect() {
        task.resume()
        events(.opened)
        receive()
    }

    private func receive() {
        task.receive { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(.string(let text)):
                events(.message(Array(text.utf8)))
                receive()
            case .success(.data(let data)):
                events(.message(Array(data)))
                receive()
            case .success:
                receive()
            case .failure(let error):
                events(.closed(reason: "\(error)"))
            }
        }
    }

    func send(_ text: [UInt8]) {
        task.send(.string(String(decoding: text, as: UTF8.self))) { _ in }
    }

    func close() {
        task.cancel(with: .normalClosure, reason: nil)
    }
}
