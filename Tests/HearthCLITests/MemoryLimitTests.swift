import Testing

@testable import HearthCLI

@Suite struct MemoryLimitTests {
    @Test func readsACgroupLimitAndNotItsNoLimitSpellings() {
        #expect(MemoryLimit.parseLimit("1073741824\n") == 1 << 30)
        #expect(MemoryLimit.parseLimit("max\n") == nil)  // cgroup v2: none
        #expect(MemoryLimit.parseLimit("9223372036854771712") == nil)  // cgroup v1: none
        #expect(MemoryLimit.parseLimit("0") == nil)
        #expect(MemoryLimit.parseLimit("-5") == nil)
        #expect(MemoryLimit.parseLimit(nil) == nil)
    }

    @Test func leavesAThirtySecondOfTheLimitToRequestBodies() {
        #expect(MemoryLimit(bytes: 1 << 30, source: "test").requestBodyBytesInFlightMax == 32 << 20)
    }
}
