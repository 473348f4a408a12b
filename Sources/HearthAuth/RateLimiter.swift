import Synchronization

/// Token buckets by key (an IP address, an account): `capacity` attempts at once, refilled at `perSecond`.
/// Idle buckets are dropped once the table grows past `maxKeys`, so a flood of addresses cannot exhaust
/// memory.
public final class RateLimiter: Sendable {
    public struct Rule: Sendable {
        public var capacity: Double
        public var perSecond: Double

        public init(capacity: Double, perSecond: Double) {
            self.capacity = capacity
            self.perSecond = perSecond
        }
    }

    private struct Bucket {
        var tokens: Double
        var updated: Int64
    }

    public let rule: Rule
    private let maxKeys: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    public init(_ rule: Rule, maxKeys: Int = 100_000) {
        self.rule = rule
        self.maxKeys = maxKeys
    }

    /// Takes one token for `key`; false when the bucket is empty (the caller answers TOO_MANY_ATTEMPTS_TRY_LATER).
    public func take(_ key: String, nowMilliseconds now: Int64) -> Bool {
        buckets.withLock { buckets in
            var bucket = refilled(buckets[key], now: now)
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return false
            }
            bucket.tokens -= 1
            if buckets.count >= maxKeys, buckets[key] == nil {
                buckets = buckets.filter { refilled($0.value, now: now).tokens < rule.capacity }
                if buckets.count >= maxKeys { buckets.removeAll() }
            }
            buckets[key] = bucket
            return true
        }
    }

    /// Whether `key` has a token left, without taking it.
    public func allows(_ key: String, nowMilliseconds now: Int64) -> Bool {
        buckets.withLock { refilled($0[key], now: now).tokens >= 1 }
    }

    /// Forgets `key` (a successful password reset unlocks the account).
    public func reset(_ key: String) {
        _ = buckets.withLock { $0.removeValue(forKey: key) }
    }

    private func refilled(_ bucket: Bucket?, now: Int64) -> Bucket {
        guard var bucket else { return Bucket(tokens: rule.capacity, updated: now) }
        let elapsed = Double(max(0, now - bucket.updated)) / 1000
        bucket.tokens = min(rule.capacity, bucket.tokens + elapsed * rule.perSecond)
        bucket.updated = now
        return bucket
    }
}
