/// When to try connecting again (docs/protocol.md §1.9, as the JS SDK does it): the delay starts at
/// `minimum`, grows by `multiplier` after each failed connection up to `maximum`, and is reset once a
/// connection stayed up for `healthySeconds`; each wait is a random fraction of the delay, so clients
/// cut off together do not all come back in the same instant.
struct ReconnectBackoff: Sendable {
    var minimum = ClientLimits.reconnectDelaySecondsMin
    var maximum = ClientLimits.reconnectDelaySecondsMax
    var multiplier = 1.3
    var healthySeconds = 30.0
    private(set) var delay = 1.0

    init(minimum: Double = ClientLimits.reconnectDelaySecondsMin, maximum: Double = ClientLimits.reconnectDelaySecondsMax) {
        self.minimum = minimum
        self.maximum = maximum
        delay = minimum
    }

    /// The connection that just ended had lasted `connectedSeconds` (nil: it never opened).
    mutating func connectionEnded(after connectedSeconds: Double?) {
        if let connectedSeconds, connectedSeconds >= healthySeconds {
            delay = minimum
        } else {
            delay = min(maximum, delay * multiplier)
        }
    }

    /// Seconds to wait before the next attempt, given a random number in 0..<1.
    func wait(random: Double) -> Double { max(0, min(1, random)) * delay }

    mutating func reset() { delay = minimum }
}
