/// Why the transport's memory budget did not take bytes (``HeldMemoryBudget``).
public enum BudgetRefusal: Equatable, Sendable {
    /// More than the whole budget: it never fits.
    case tooLarge(bytesMax: Int)
    /// Others hold the budget now: it may fit once they are done.
    case busy(bytesInFlight: Int, bytesMax: Int)

    /// What a realtime connection closed for it says, to its client (the close reason) and in the log.
    public var reason: String {
        switch self {
        case .tooLarge(let bytesMax): "message larger than the server takes at once under its memory limit (\(bytesMax) bytes)"
        case .busy: "server busy with other large messages under its memory limit: nothing was written, retry"
        }
    }

    /// How much others hold, for the log.
    public var detail: String? {
        guard case .busy(let bytesInFlight, let bytesMax) = self else { return nil }
        return "\(bytesInFlight) of \(bytesMax) bytes held"
    }
}

/// What one realtime connection holds of the transport's memory budget for its messages (the one
/// arriving, and one being reassembled from frames or long-poll segments): everything past
/// ``ServerLimits/realtimeMessageBytesUnbudgeted``. WebSocket and long-poll connections keep one each,
/// on the loop, and close with the refusal's reason when it does not fit.
///
///     var held = HeldMessageBytes()
///     held.hold(10 << 20, from: budget)   // nil: 10 MiB less the unbudgeted 64 KiB taken
///     held.hold(1_000, from: budget)      // nil: all of it given back
public struct HeldMessageBytes: Sendable {
    /// Bytes taken from the budget now.
    public private(set) var budgeted = 0

    public init() {}

    /// Holds what `held` bytes of messages need: takes more, or gives back what is no longer needed.
    /// When the budget refuses, gives back everything it held and says why.
    public mutating func hold(_ held: Int, from budget: any HeldMemoryBudget) -> BudgetRefusal? {
        let wanted = max(0, held - ServerLimits.realtimeMessageBytesUnbudgeted)
        if wanted <= budgeted {
            if wanted < budgeted { budget.release(budgeted - wanted) }
            budgeted = wanted
            return nil
        }
        if let refusal = budget.hold(wanted - budgeted) {
            release(to: budget)
            return refusal
        }
        budgeted = wanted
        return nil
    }

    /// Gives back everything held (the connection closed).
    public mutating func release(to budget: any HeldMemoryBudget) {
        if budgeted > 0 { budget.release(budgeted) }
        budgeted = 0
    }
}
