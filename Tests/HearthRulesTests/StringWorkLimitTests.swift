import HearthCore
import Testing

@testable import HearthRules

/// Strings a client chooses can make rule methods do unbounded work or build unbounded strings: each
/// is bounded, and an operation over a bound is denied rather than taking the server's memory or loop.
@Test func replaceThatWouldBuildAHugeStringDeniesTheWrite() throws {
    let rules = try RuleSet(source: #"{"rules": {"t": {".write": "newData.val().replace('a', newData.val()).length > 0"}}}"#)
    let value = Node(String(repeating: "a", count: 100_000))  // 100,000 × 100,000 bytes if built
    let decision = rules.canWrite(at: Path("t"), newValue: value, root: .empty, auth: nil, now: 0)
    #expect(!decision.allowed)
    let small = rules.canWrite(at: Path("t"), newValue: Node("abc"), root: .empty, auth: nil, now: 0)
    #expect(small.allowed)
}

@Test func concatenationIsBoundedToTheLargestStorableString() throws {
    let rules = try RuleSet(source: #"{"rules": {"t": {".write": "(newData.val() + newData.val()).length > 0"}}}"#)
    let big = Node(String(repeating: "x", count: Limits.stringLengthBytesMax / 2 + 1))
    #expect(!rules.canWrite(at: Path("t"), newValue: big, root: .empty, auth: nil, now: 0).allowed)
    #expect(rules.canWrite(at: Path("t"), newValue: Node("x"), root: .empty, auth: nil, now: 0).allowed)
}

@Test func searchingALongStringForANearlyMatchingNeedleIsLinear() throws {
    // A naive search compares most of the needle at every position: 2 MB × 20 kB here.
    let haystack = String(repeating: "a", count: 2_000_000)
    let needle = String(repeating: "a", count: 20_000) + "b"
    #expect(!StringSearch.contains(haystack, needle))
    #expect(StringSearch.contains(haystack + "b", needle))
    #expect(StringSearch.replacingAll(in: "abcabc", "bc", with: "X", bytesMax: 100) == "aXaX")
    #expect(StringSearch.replacingAll(in: "ab", "", with: "-", bytesMax: 100) == "-a-b-")
    #expect(StringSearch.replacingAll(in: "aaaa", "a", with: "bb", bytesMax: 7) == nil)
    #expect(StringSearch.replacingAll(in: "aaa", "aa", with: "b", bytesMax: 10) == "ba")
}

@Test func patternMatchingALongStringSpendsTheBudget() throws {
    let rules = try RuleSet(source: #"{"rules": {"t": {".write": "newData.val().matches(/^(a|b|c|d|e|f|g|h)*z$/)"}}}"#)
    // 10 MiB of input against a pattern of dozens of instructions: over the operation's budget.
    let huge = Node(String(repeating: "a", count: Limits.stringLengthBytesMax))
    let decision = rules.canWrite(at: Path("t"), newValue: huge, root: .empty, auth: nil, now: 0)
    #expect(!decision.allowed)
    #expect(rules.canWrite(at: Path("t"), newValue: Node("abz"), root: .empty, auth: nil, now: 0).allowed)
}
