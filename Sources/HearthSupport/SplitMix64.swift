/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014):
/// a small, fast, well-distributed generator whose sequence is fixed by its seed, so generated test
/// data, random test cases and benchmark workloads replay exactly. Not for secrets.
///
///     var random = SplitMix64(seed: 7)
///     random.next(below: 6)   // the same die roll on every run
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`, by Lemire's multiply-shift (its tiny bias does not matter for test
    /// data and workloads).
    public mutating func next(below bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next().multipliedFullWidth(by: UInt64(bound)).high)
    }
}
