import HearthStorage

/// What the server has done since it started, counted where it happens: reads, committed writes and
/// refused ones by protocol, and what fan-out delivered. `/metrics` renders them with the gauges of the
/// moment (``MetricsEndpoint``). Counters only grow. Loop thread only.
final class ServerMetrics {
    /// The protocol a read or write came by.
    enum Channel: String, CaseIterable {
        case rest
        case realtime
        /// onDisconnect operations run when their connection closed.
        case onDisconnect = "on_disconnect"
    }

    private(set) var reads: [Channel: Int] = [:]
    private(set) var writes: [Channel: Int] = [:]
    /// Writes not made, by ``WriteFailure`` kind.
    private(set) var writeFailures: [String: Int] = [:]
    /// Writes storage failed, by the storage error's code (`DISK_FULL`, `IO_ERROR`, `UNAVAILABLE`…).
    private(set) var storageErrors: [String: Int] = [:]
    /// Messages fan-out queued (SSE events and realtime pushes), and their bytes.
    private(set) var deliveries = 0
    private(set) var deliveredBytes = 0
    private(set) var httpRequests = 0
    /// Writes sent again by their client (the same write ID) and answered without being applied again.
    private(set) var resentWrites = 0
    /// When the server started, in milliseconds since the epoch.
    let startedAt: Int64

    init(startedAt: Int64) { self.startedAt = startedAt }

    func countRead(_ channel: Channel) { reads[channel, default: 0] &+= 1 }
    func countWrite(_ channel: Channel) { writes[channel, default: 0] &+= 1 }
    func countWriteFailure(_ failure: WriteFailure) { writeFailures[failure.metricName, default: 0] &+= 1 }
    func countHTTPRequest() { httpRequests &+= 1 }
    func countResentWrite() { resentWrites &+= 1 }
    func countStorageError(_ code: StorageError.Code) { storageErrors[code.rawValue, default: 0] &+= 1 }

    func countDeliveries(_ messages: [[UInt8]]) {
        deliveries &+= messages.count
        for message in messages { deliveredBytes &+= message.count }
    }
}

extension WriteFailure {
    /// The failure's label in `/metrics`.
    var metricName: String {
        switch self {
        case .invalid: return "invalid"
        case .permissionDenied: return "permission_denied"
        case .stale: return "stale"
        case .storage: return "storage"
        }
    }
}
