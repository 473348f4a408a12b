import CMalloc

/// The bytes glibc's allocator has handed out and not had back (`mallinfo2`: in use in its arenas plus
/// chunks it mapped alone), for `/metrics` (`hearth_heap_bytes`). Resident memory that grows while this
/// stays flat is the allocator keeping freed pages; this growing is memory the server holds on to.
enum ProcessHeap {
    @Sendable static func bytesInUse() -> Int? {
        let info = mallinfo2()
        return Int(info.uordblks) + Int(info.hblkhd)
    }
}
