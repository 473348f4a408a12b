import CMalloc
import Glibc

/// The bytes glibc's allocator has handed out and not had back, over all its arenas, for `/metrics`
/// (`hearth_heap_bytes`). Resident memory that grows while this stays flat is the allocator keeping freed
/// pages; this growing is memory the server holds on to.
///
/// `mallinfo2` counts the main arena only, and the loop and storage threads allocate in arenas of their
/// own, so this reads `malloc_info`'s totals instead: what the arenas took from the system, less their
/// free chunks, plus the chunks mapped alone. The one owner of glibc's malloc statistics (CMalloc):
/// hearth-bench counts a tree's bytes with ``mainArenaBytesInUse()`` and ``trim()``.
public enum ProcessHeap {
    @Sendable public static func bytesInUse() -> Int? {
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return nil }
        let status = malloc_info(0, stream)
        fclose(stream)
        defer { free(buffer) }
        guard status == 0, let buffer else { return nil }
        return MallocInfo(xml: String(cString: buffer))?.bytesInUse
    }
}

extension ProcessHeap {
    /// The main arena's bytes in use (`mallinfo2().uordblks`): the calling thread's allocations when it
    /// is the main thread, read without `malloc_info`'s locks of every arena.
    public static func mainArenaBytesInUse() -> Int { Int(mallinfo2().uordblks) }

    /// Gives free memory at the top of the heap back to the system (`malloc_trim(0)`), so that what a
    /// measurement allocates next is not served from memory freed before it.
    public static func trim() { _ = malloc_trim(0) }
}

/// The totals at the end of `malloc_info`'s XML (after every arena's own):
///
///     <total type="fast" count="0" size="0"/>
///     <total type="rest" count="3" size="2288"/>
///     <total type="mmap" count="1" size="135168"/>
///     <system type="current" size="1507328"/>
struct MallocInfo {
    var freeFast = 0, freeRest = 0, mapped = 0, system = 0

    /// Nil when a total is missing: not glibc's format.
    init?(xml: String) {
        func last(_ tag: String) -> Int? {
            guard let line = xml.split(separator: "\n").last(where: { $0.contains(tag) }),
                let sizeStart = line.range(of: "size=\"")?.upperBound,
                let sizeEnd = line[sizeStart...].firstIndex(of: "\"")
            else { return nil }
            return Int(line[sizeStart..<sizeEnd])
        }
        guard let fast = last("<total type=\"fast\""), let rest = last("<total type=\"rest\""), let mmap = last("<total type=\"mmap\""),
            let current = last("<system type=\"current\"")
        else { return nil }
        (freeFast, freeRest, mapped, system) = (fast, rest, mmap, current)
    }

    var bytesInUse: Int { max(0, system - freeFast - freeRest) + mapped }
}
