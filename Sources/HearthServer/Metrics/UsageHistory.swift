/// The console's usage charts (docs/console.md, "Usage"): connections, and reads, writes and bytes per
/// second, for the last minute (a point a second), hour (a minute) and day (ten minutes). Fed once a
/// second with the server's running totals; a point's rates are the totals' growth over its step. A
/// value, in memory: a restart starts the charts afresh (Prometheus keeps the long history).
///
/// It starts with a baseline of zero totals at the server's start, so what is done before the first
/// tick is the first point's, not folded into a baseline that is never drawn.
struct UsageHistory {
    /// The server's totals at one moment.
    struct Totals: Equatable {
        var t: Int64
        var connections: Int
        var reads: Int
        var writes: Int
        var bytes: Int
    }

    /// One point of a chart: rates per second over the step that ended at `t` and lasted `seconds`
    /// (about the range's step; the loop's timer is not exact), so rate × seconds is what was done.
    struct Point: Equatable {
        var t: Int64
        var seconds: Double
        var connections: Int
        var reads: Double
        var writes: Double
        var bytes: Double
    }

    enum Range: String, CaseIterable {
        case minute, hour, day

        var stepMilliseconds: Int64 {
            switch self {
            case .minute: return 1000
            case .hour: return 60_000
            case .day: return 600_000
            }
        }

        /// Points kept (one more snapshot than that, to take differences).
        var points: Int {
            switch self {
            case .minute: return 60
            case .hour: return 60
            case .day: return 144
            }
        }
    }

    private var snapshots: [Range: [Totals]] = [:]

    /// A history whose every range begins with nothing done at `start` (milliseconds).
    init(startingAt start: Int64) {
        let zero = Totals(t: start, connections: 0, reads: 0, writes: 0, bytes: 0)
        for range in Range.allCases { snapshots[range] = [zero] }
    }

    /// Takes the totals of now; each range keeps them when its step has passed since its last.
    mutating func record(_ totals: Totals) {
        for range in Range.allCases {
            var kept = snapshots[range, default: []]
            // A tick a little early still counts for a one-second step (the loop's timer is not exact).
            if let last = kept.last, totals.t - last.t < range.stepMilliseconds - range.stepMilliseconds / 10 { continue }
            kept.append(totals)
            if kept.count > range.points + 1 { kept.removeFirst(kept.count - range.points - 1) }
            snapshots[range] = kept
        }
    }

    /// The range's points, oldest first.
    func points(_ range: Range) -> [Point] {
        let kept = snapshots[range, default: []]
        guard kept.count >= 2 else { return [] }
        return zip(kept, kept.dropFirst()).map { before, after in
            let seconds = Double(max(after.t - before.t, 1)) / 1000
            // Totals only grow; a negative step (never expected) reads as zero rather than a spike.
            func rate(_ a: Int, _ b: Int) -> Double { Double(max(b - a, 0)) / seconds }
            return Point(
                t: after.t, seconds: seconds, connections: after.connections, reads: rate(before.reads, after.reads),
                writes: rate(before.writes, after.writes), bytes: rate(before.bytes, after.bytes))
        }
    }
}
