/// The request bodies being read or handled at once, held to a budget so that a server under a memory
/// limit refuses what would not fit instead of dying when an allocation fails (Swift cannot recover from
/// one). A body takes many times its size while it is parsed and written (docs/reliability.md measures
/// it), from its first byte until its answer is written: it is reserved for that long.
///
///     var budget = RequestBodyBudget(bytesMax: 64 << 20)
///     budget.reserve(40 << 20)   // .granted
///     budget.reserve(40 << 20)   // .busy: answered 503, retry once the first is done
///     budget.reserve(80 << 20)   // .tooLarge: answered 413, it never fits
///
/// A value; the transport keeps one, on the loop thread.
struct RequestBodyBudget: Equatable {
    enum Decision: Equatable {
        case granted
        /// Larger than the whole budget: it would never be taken.
        case tooLarge(bytesMax: Int)
        /// Other requests' bodies hold the budget now.
        case busy(bytesInFlight: Int, bytesMax: Int)
    }

    /// Nil: no budget (no memory limit known); every body within the per-request maximum is taken.
    let bytesMax: Int?
    private(set) var bytesInFlight = 0

    init(bytesMax: Int?) {
        self.bytesMax = bytesMax
    }

    /// Takes `bytes` more of the budget, or says why not (and takes nothing).
    mutating func reserve(_ bytes: Int) -> Decision {
        if let bytesMax {
            if bytes > bytesMax { return .tooLarge(bytesMax: bytesMax) }
            if bytesInFlight + bytes > bytesMax { return .busy(bytesInFlight: bytesInFlight, bytesMax: bytesMax) }
        }
        bytesInFlight += bytes
        return .granted
    }

    /// Gives back what a finished request had reserved.
    mutating func release(_ bytes: Int) {
        precondition(bytes >= 0 && bytes <= bytesInFlight, "released \(bytes) of \(bytesInFlight) reserved bytes")
        bytesInFlight -= bytes
    }
}
