import Testing

@testable import HearthCLI

/// `hearth_heap_bytes` reads the totals after every arena's own in glibc's `malloc_info` XML.
@Test func theHeapInUseIsTheArenasMemoryLessTheirFreeChunksPlusTheMappedOnes() throws {
    let xml = """
        <malloc version="1">
        <heap nr="0">
        <sizes>
        </sizes>
        <total type="fast" count="1" size="32"/>
        <total type="rest" count="2" size="4000"/>
        <system type="current" size="135168"/>
        </heap>
        <total type="fast" count="3" size="96"/>
        <total type="rest" count="5" size="10000"/>
        <total type="mmap" count="1" size="200704"/>
        <system type="current" size="1000000"/>
        <system type="max" size="2000000"/>
        <aspace type="total" size="1000000"/>
        </malloc>
        """
    let info = try #require(MallocInfo(xml: xml))
    #expect(info.bytesInUse == 1_000_000 - 96 - 10_000 + 200_704)
    #expect(MallocInfo(xml: "<malloc version=\"1\"></malloc>") == nil)
    // The real one, from this process.
    #expect((ProcessHeap.bytesInUse() ?? 0) > 0)
}
