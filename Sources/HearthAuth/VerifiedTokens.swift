/// The ID tokens ``TokenVerifier`` has verified, by their string: the database sees the same token on
/// every request of a client, and a signature check costs far more than a lookup. Bounded two ways:
/// per account the newest `perAccountMax` (a client presents its newest token; an older one still valid
/// is verified again if it comes back), so clients that refresh often do not fill it with tokens they
/// no longer send; and `capacity` in all, past which it starts over (a bound, not an LRU).
///
///     var tokens = VerifiedTokens(capacity: 10_000, perAccountMax: 4)
///     tokens.insert(context, for: token)
///     tokens[token]   // the context, until four newer tokens of its account came, or the reset
struct VerifiedTokens: Sendable {
    private var contexts: [String: AuthContext] = [:]
    /// Each account's tokens held, oldest first.
    private var byAccount: [String: [String]] = [:]
    let capacity: Int
    let perAccountMax: Int

    init(capacity: Int, perAccountMax: Int = 4) {
        self.capacity = capacity
        self.perAccountMax = perAccountMax
    }

    var count: Int { contexts.count }

    subscript(token: String) -> AuthContext? { contexts[token] }

    mutating func insert(_ context: AuthContext, for token: String) {
        guard capacity > 0, contexts[token] == nil else { return }
        if contexts.count >= capacity {
            contexts.removeAll(keepingCapacity: true)
            byAccount.removeAll(keepingCapacity: true)
        }
        contexts[token] = context
        var tokens = byAccount[context.uid, default: []]
        tokens.append(token)
        if tokens.count > perAccountMax { contexts[tokens.removeFirst()] = nil }
        byAccount[context.uid] = tokens
    }
}
