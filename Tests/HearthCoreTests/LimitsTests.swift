import Testing
@testable import HearthCore

/// The limits constrain each other: these relations are what makes each one reachable and safe.
struct LimitsTests {
    @Test func aKeyAtItsLimitFitsInAPathAtItsLimit() {
        // One key of the maximum length plus its separator must fit in a path, or no write could
        // use a maximal key.
        #expect(Limits.keyLengthBytesMax + 1 <= Limits.pathLengthBytesMax + 1)
        #expect(throws: Never.self) { try KeyValidation.validate(ChildKey(String(repeating: "k", count: Limits.keyLengthBytesMax))) }
        #expect(throws: DataError.self) { try KeyValidation.validate(ChildKey(String(repeating: "k", count: Limits.keyLengthBytesMax + 1))) }
    }

    @Test func jsonNestingAllowsTheDeepestDataWithItsWrappers() {
        // Data 32 keys deep, in export form inside a wire envelope, must parse.
        #expect(Limits.jsonNestingDepthMax > Limits.pathDepthMax + 3)
    }

    @Test func theDeepestLegalPathIsAcceptedAndOneMoreIsNot() throws {
        let deepest = Path((0..<Limits.pathDepthMax).map { ChildKey("k\($0)") })
        try KeyValidation.validate(writePath: deepest)
        #expect(throws: DataError.self) { try KeyValidation.validate(writePath: deepest.appending("more")) }
    }

    @Test func integerKeysAreExactlyTheThirtyTwoBitRange() {
        #expect(Limits.integerKeyRange.lowerBound == Int64(Int32.min))
        #expect(Limits.integerKeyRange.upperBound == Int64(Int32.max))
        #expect(Limits.stringLengthBytesMax == 10 * 1024 * 1024)
    }
}
