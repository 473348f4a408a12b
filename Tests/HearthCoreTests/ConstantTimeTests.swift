import HearthSupport
import Testing

@Test func constantTimeEquality() {
    #expect(ConstantTime.equal([1, 2, 3], [1, 2, 3]))
    #expect(!ConstantTime.equal([1, 2, 3], [1, 2, 4]))
    #expect(!ConstantTime.equal([1, 2], [1, 2, 3]))
    #expect(ConstantTime.equal([], []))
    #expect(ConstantTime.equal("owner", "owner") && !ConstantTime.equal("owner", "owned"))
}
