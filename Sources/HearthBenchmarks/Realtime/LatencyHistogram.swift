/// Latencies in microseconds, counted in log-linear buckets (32 per power of two, so within about 3 %),
/// small enough to send from a worker process as one line and to merge across workers.
struct LatencyHistogram: Equatable {
    static let subBuckets = 32
    static let linearLimit = 64  // below this every microsecond has its own bucket
    static let bucketCount = linearLimit + 40 * subBuckets

    private(set) var counts = [Int](repeating: 0, count: bucketCount)
    private(set) var total = 0

    static func bucket(of microseconds: Int) -> Int {
        let value = max(0, microseconds)
        if value < linearLimit { return value }
        let exponent = (Int.bitWidth - 1) - value.leadingZeroBitCount  // ≥ 6
        let sub = (value >> (exponent - 5)) & (subBuckets - 1)
        return min(bucketCount - 1, linearLimit + (exponent - 6) * subBuckets + sub)
    }

    /// The smallest value that falls in `bucket`.
    static func lowerBound(of bucket: Int) -> Int {
        if bucket < linearLimit { return bucket }
        let exponent = (bucket - linearLimit) / subBuckets + 6
        let sub = (bucket - linearLimit) % subBuckets
        return (subBuckets + sub) << (exponent - 5)
    }

    mutating func record(microseconds: Int) {
        counts[Self.bucket(of: microseconds)] += 1
        total += 1
    }

    mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
        total += other.total
    }

    /// The value at quantile `q` (0…1) in milliseconds (the bucket's lower bound), or nil when empty.
    func percentileMilliseconds(_ q: Double) -> Double? {
        guard total > 0 else { return nil }
        let rank = min(total - 1, Int(Double(total) * q))
        var seen = 0
        for (index, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen > rank { return Double(Self.lowerBound(of: index)) / 1000 }
        }
        return nil
    }

    /// `bucket:count` pairs of the non-empty buckets, comma-separated ("-" when empty).
    var encoded: String {
        let pairs = counts.enumerated().filter { $0.element > 0 }.map { "\($0.offset):\($0.element)" }
        return pairs.isEmpty ? "-" : pairs.joined(separator: ",")
    }

    init() {}

    init?(encoded: Substring) {
        guard encoded != "-" else { return }
        for pair in encoded.split(separator: ",") {
            let parts = pair.split(separator: ":")
            guard parts.count == 2, let bucket = Int(parts[0]), let count = Int(parts[1]),
                counts.indices.contains(bucket), count >= 0
            else { return nil }
            counts[bucket] += count
            total += count
        }
    }
}
