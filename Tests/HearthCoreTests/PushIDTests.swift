import Testing
@testable import HearthCore
import HearthSupport

/// Push IDs per docs/protocol.md §5.8.
@Suite struct PushIDTests {
    /// Always all ones: the random part starts at `zzzzzzzzzzzz`, one step from overflowing.
    struct SaturatedGenerator: RandomNumberGenerator {
        mutating func next() -> UInt64 { .max }
    }

    /// Returns the given values in turn.
    struct SequenceGenerator: RandomNumberGenerator {
        var values: [UInt64]
        var index = 0
        mutating func next() -> UInt64 {
            defer { index += 1 }
            return values[index % values.count]
        }
    }

    static let alphabetOrder = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
    static let alphabet = Set("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")

    /// Checks that each ID is well formed, not an integer key, and above the one before it in both
    /// Swift string order and Firebase key order.
    static func expectWellFormedAndIncreasing(_ ids: [String]) {
        for (index, id) in ids.enumerated() {
            #expect(id.count == 20 && id.allSatisfy { alphabet.contains($0) }, "\(id)")
            #expect(KeyOrder.integerValue(of: id) == nil, "\(id)")
            if index > 0 {
                let previous = ids[index - 1]
                #expect(previous < id, "\(previous) then \(id)")
                #expect(ChildKey(previous) < ChildKey(id), "\(previous) then \(id)")
            }
        }
    }

    @Test(arguments: [(Int64(1_700_000_000_000), "-NjEtLV-"), (1_461_173_397_480, "-KFoi9Uc")])
    func timestampPrefixMatchesSpec(milliseconds: Int64, prefix: String) {
        var ids = PushIDGenerator()
        var random = SplitMix64(seed: 1)
        let id = ids.next(now: milliseconds, using: &random)
        #expect(id.hasPrefix(prefix))
        #expect(id.count == 20)
    }

    @Test func sameMillisecondIncrementsTheRandomPart() {
        var ids = PushIDGenerator()
        var random = SplitMix64(seed: 7)
        let first = ids.next(now: 1_700_000_000_000, using: &random)
        let second = ids.next(now: 1_700_000_000_000, using: &random)
        #expect(first.prefix(8) == second.prefix(8))
        let (high1, low1) = Self.randomPart(first), (high2, low2) = Self.randomPart(second)
        #expect((high2 - high1) * (1 << 36) + (low2 - low1) == 1)
    }

    @Test func incrementCarriesFromTheRight() {
        var ids = PushIDGenerator()
        // Draws whose low 6-bit groups are all ones: the first 10 random digits come out as `z`
        // (taken least significant group first) and the last two as `-`.
        var random = SequenceGenerator(values: [.max, 0])
        let first = ids.next(now: 0, using: &random)
        let second = ids.next(now: 0, using: &random)
        let third = ids.next(now: 0, using: &random)
        #expect(first == "--------zzzzzzzzzz--")
        #expect(second == "--------zzzzzzzzzz-0")
        #expect(third == "--------zzzzzzzzzz-1")
        var carry = PushIDGenerator()
        var saturatedTail = SequenceGenerator(values: [0, .max])
        #expect(carry.next(now: 0, using: &saturatedTail) == "------------------zz")
        #expect(carry.next(now: 0, using: &saturatedTail) == "-----------------0--")
    }

    /// The 12 random digits as a 72-bit number, in two 36-bit halves so each fits in `Int`.
    static func randomPart(_ id: String) -> (high: Int, low: Int) {
        let digits = id.suffix(12).map { Array(alphabetOrder).firstIndex(of: $0)! }
        let high = digits[..<6].reduce(0) { $0 * 64 + $1 }
        let low = digits[6...].reduce(0) { $0 * 64 + $1 }
        return (high, low)
    }

    @Test func hundredThousandIDsInOneMillisecondIncrease() {
        var ids = PushIDGenerator()
        var random = SplitMix64(seed: 42)
        let generated = (0..<100_000).map { _ in ids.next(now: 1_700_000_000_000, using: &random) }
        #expect(generated.allSatisfy { $0.hasPrefix("-NjEtLV-") })
        Self.expectWellFormedAndIncreasing(generated)
    }

    @Test func idsIncreaseAcrossMilliseconds() {
        var ids = PushIDGenerator()
        var random = SplitMix64(seed: 3)
        var generated: [String] = []
        var now: Int64 = 1_461_173_397_480
        for step in 0..<20_000 {
            if step % 3 == 0 { now += Int64(step % 5) }  // repeats and jumps
            generated.append(ids.next(now: now, using: &random))
        }
        Self.expectWellFormedAndIncreasing(generated)
    }

    @Test func clockGoingBackwardsKeepsIDsIncreasing() {
        var ids = PushIDGenerator()
        var random = SplitMix64(seed: 9)
        let first = ids.next(now: 1_700_000_000_000, using: &random)
        let second = ids.next(now: 1_699_999_000_000, using: &random)
        let third = ids.next(now: 1_700_000_000_001, using: &random)
        #expect(second.hasPrefix("-NjEtLV-"))
        Self.expectWellFormedAndIncreasing([first, second, third])
    }

    @Test func overflowingRandomPartMovesToTheNextMillisecond() {
        var ids = PushIDGenerator()
        var random = SaturatedGenerator()
        let first = ids.next(now: 1_700_000_000_000, using: &random)
        let second = ids.next(now: 1_700_000_000_000, using: &random)
        #expect(first == "-NjEtLV-zzzzzzzzzzzz")
        #expect(second == "-NjEtLV0------------")
        Self.expectWellFormedAndIncreasing([first, second])
    }

    @Test func systemRandomnessVariant() {
        var ids = PushIDGenerator()
        let first = ids.next(now: 1_700_000_000_000)
        let second = ids.next(now: 1_700_000_000_000)
        Self.expectWellFormedAndIncreasing([first, second])
    }
}
