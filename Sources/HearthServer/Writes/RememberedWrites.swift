import HearthCore
import HearthStorage

/// Which write IDs (HearthClient's `wid`, docs/protocol.md §2.6.1) a namespace has applied, or is
/// applying: a client that lost its connection, or was killed and restarted, sends again every write it
/// has no answer for, and a write that was applied must not be applied twice (a set would undo the
/// writes made after it; a transaction would run twice). One namespace's; the loop's (``Namespace``).
///
/// An ID is remembered once its write is durable (``StorageEngine/rememberedWriteIDs()`` has it after a
/// restart); while the write is in flight, a resend waits for its outcome. The newest
/// `Limits.rememberedWriteIDsMax` are kept.
struct RememberedWrites<Waiter> {
    enum Admission: Equatable {
        /// Not seen: apply it (it is in flight until ``finished(_:applied:)``).
        case apply
        /// Applied already: acknowledge it without applying it.
        case applied
        /// The same write is in flight: the waiter hears its outcome.
        case waiting
    }

    private var applied: RecentWriteIDs
    private var inFlight: [String: [Waiter]] = [:]

    /// Remembers `ids` (oldest first) as applied.
    init(applied ids: [String] = [], capacity: Int = Limits.rememberedWriteIDsMax) {
        applied = RecentWriteIDs(ids, capacity: capacity)
    }

    var appliedCount: Int { applied.count }

    /// What to do with a write whose client calls it `id`; `waiter` is kept only for `.waiting`.
    mutating func admit(_ id: String, waiter: Waiter) -> Admission {
        if applied.contains(id) { return .applied }
        if inFlight[id] != nil {
            inFlight[id, default: []].append(waiter)
            return .waiting
        }
        inFlight[id] = []
        return .apply
    }

    /// The write admitted as `id` is durable (`applied`) or was not made: returns the resends that waited
    /// for it, which have its outcome. A write not made is forgotten: its next resend is decided again.
    mutating func finished(_ id: String, applied wasApplied: Bool) -> [Waiter] {
        let waiters = inFlight.removeValue(forKey: id) ?? []
        if wasApplied { applied.insert(id) }
        return waiters
    }
}
