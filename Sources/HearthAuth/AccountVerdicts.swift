import Dispatch
import HearthProtocol
import Foundation
import Synchronization

/// Whether an account still lets its ID tokens in (not disabled, tokens issued after its `validSince`),
/// answered from memory for a store that is a network round trip away (PostgreSQL in a cluster).
///
/// The server asks on its event loop for every request that shows a signed token, and again once a
/// second for every open connection. A store on the network must not be waited for there: a slow or
/// stopped PostgreSQL would stall every client of the node. So the answer is the last one read, and the
/// read happens on a queue of its own: at once for an account not seen yet (its token is let in
/// meanwhile: the signature was verified), and again when an answer is older than `freshness`. A
/// disabled account or revoked tokens are therefore refused within about a second plus a round trip,
/// where a local store refuses them at once.
final class AccountVerdicts: Sendable {
    private struct Verdict {
        var disabled: Bool
        var validSince: Int64
        var readAt: ContinuousClock.Instant
    }

    /// How old an answer may be before it is read again.
    static let freshness: Duration = .seconds(1)

    private let known = Mutex<[String: Verdict]>([:])
    private let reading = Mutex<Set<String>>([])
    private let queue = DispatchQueue(label: "hearth.auth.verdicts", attributes: .concurrent)
    private let store: any AccountStore

    init(store: any AccountStore) { self.store = store }

    /// Waits for the reads under way (before the store they read from closes).
    func finishReads() { queue.sync(flags: .barrier) {} }

    func allows(uid: String, issuedAt: Int64) -> Bool {
        let verdict = known.withLock { $0[uid] }
        if verdict.map({ ContinuousClock.now - $0.readAt > Self.freshness }) ?? true { read(uid) }
        guard let verdict else { return true }
        return !verdict.disabled && issuedAt >= verdict.validSince
    }

    private func read(_ uid: String) {
        guard reading.withLock({ $0.insert(uid).inserted }) else { return }
        queue.async { [self] in
            defer { _ = reading.withLock { $0.remove(uid) } }
            let found: UserRecord?
            // A store that cannot answer keeps the last answer; the next question asks again.
            do { found = try store.user(id: uid) } catch { return }
            // No account (deleted) lets nothing in, as a disabled one.
            remember(uid, found.map { Verdict(disabled: $0.disabled, validSince: $0.validSince, readAt: .now) }
                ?? Verdict(disabled: true, validSince: .max, readAt: .now))
        }
    }

    private func remember(_ uid: String, _ verdict: Verdict) {
        known.withLock { known in
            if known.count >= ServerLimits.accountVerdictsMax, known[uid] == nil, let oldest = known.min(by: { $0.value.readAt < $1.value.readAt })?.key {
                known[oldest] = nil
            }
            known[uid] = verdict
        }
    }
}
