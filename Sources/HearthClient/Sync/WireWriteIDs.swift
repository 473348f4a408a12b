/// The IDs a repo gives its writes on the wire (`wid`, docs/protocol.md §2.6.1): a random name for this
/// run of the repo (26 base-36 digits) and the write's number, `"0k3f9x0c2m1q8z07a4b2c9d1e5-17"`. The
/// server applies a write once whatever number of times it arrives, so a write sent again after a
/// reconnect, or after the app was killed and restarted (persistence keeps the ID with the write),
/// cannot be applied twice. 128 random bits: two runs, on any number of devices, never name two writes
/// alike.
struct WireWriteIDs: Sendable {
    let run: String

    init() {
        var generator = SystemRandomNumberGenerator()
        run = Self.base36(generator.next()) + Self.base36(generator.next())
    }

    func id(of write: Int64) -> String { "\(run)-\(write)" }

    /// 13 digits, zero-padded, so that the run's two halves cannot run into each other.
    private static func base36(_ value: UInt64) -> String {
        let digits = String(value, radix: 36)
        return String(repeating: "0", count: 13 - digits.count) + digits
    }
}
