/// Makes push IDs: the 20-character keys `push()` and REST `POST` create, which sort in the
/// order they were made (docs/protocol.md §5.8).
///
/// An ID is 8 characters of millisecond timestamp, most significant first, then 12 characters
/// (72 bits) of randomness, all over a 64-character alphabet in ASCII order, so string order is
/// time order. From 1994 to 2109 the first character is `-` and the second a letter, so an ID
/// is never an integer key (those sort numerically before all others, §5.6).
///
///     var ids = PushIDGenerator()
///     ids.next(now: 1_700_000_000_000)   // "-NjEtLV-" followed by 12 random characters
///
/// IDs from one generator are strictly increasing: a second ID in the same millisecond reuses the
/// previous random part plus one, as every Firebase client does.
public struct PushIDGenerator: Sendable {
    /// `-0-9A-Z_a-z`: 64 symbols in ASCII order, so comparing IDs compares their values.
    static let alphabet: [UInt8] = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

    /// The largest timestamp 8 base-64 digits hold (2^48 − 1 ms, in the year 10889).
    static let timestampMax: Int64 = (1 << 48) - 1

    /// The timestamp of the last ID, or nil before the first one.
    private var lastTimestamp: Int64?
    /// The last ID's random part, as 12 base-64 digit values (0–63), most significant first.
    private var lastRandom: [UInt8] = Array(repeating: 0, count: 12)

    public init() {}

    /// The next ID for the time `milliseconds` since 1970, drawing randomness from `generator`.
    ///
    /// Hearth choice: when the clock reads earlier than the last ID's timestamp (a clock stepped
    /// back), the last timestamp is used and the random part incremented, exactly as for a repeat
    /// of the same millisecond, so IDs stay strictly increasing. Firebase clients instead start a
    /// fresh, possibly smaller, ID; a server that hands out keys for REST `POST` should not. For
    /// the same reason, in the 2^-72-unlikely case that incrementing overflows all 12 random
    /// digits, the timestamp advances by one millisecond rather than wrapping to a smaller ID.
    /// Times before 1970 count as 0.
    public mutating func next(now milliseconds: Int64, using generator: inout some RandomNumberGenerator) -> String {
        var timestamp = min(max(milliseconds, 0), Self.timestampMax)
        if let lastTimestamp, timestamp <= lastTimestamp {
            timestamp = lastTimestamp
            if !incrementRandom() {
                // Every digit carried over: move on to the next millisecond, where all-zero random
                // digits still sort above every ID already given out.
                timestamp += 1
            }
        } else {
            var bits = generator.next()
            for index in 0..<12 {
                // 64 bits cover ten digits; the last two come from a second draw.
                if index == 10 { bits = generator.next() }
                lastRandom[index] = UInt8(truncatingIfNeeded: bits & 63)
                bits >>= 6
            }
        }
        lastTimestamp = timestamp

        var id = [UInt8](repeating: 0, count: 20)
        var remaining = timestamp
        for index in stride(from: 7, through: 0, by: -1) {
            id[index] = Self.alphabet[Int(remaining & 63)]
            remaining >>= 6
        }
        for index in 0..<12 { id[8 + index] = Self.alphabet[Int(lastRandom[index])] }
        return String(decoding: id, as: UTF8.self)
    }

    /// The next ID for the time `milliseconds` since 1970, with the system's secure random source.
    public mutating func next(now milliseconds: Int64) -> String {
        var generator = SystemRandomNumberGenerator()
        return next(now: milliseconds, using: &generator)
    }

    /// Adds one to the random part, carrying from the right. Returns false when every digit
    /// overflowed (the part is then all zeros).
    private mutating func incrementRandom() -> Bool {
        for index in stride(from: 11, through: 0, by: -1) {
            if lastRandom[index] < 63 {
                lastRandom[index] += 1
                return true
            }
            lastRandom[index] = 0
        }
        return false
    }
}
