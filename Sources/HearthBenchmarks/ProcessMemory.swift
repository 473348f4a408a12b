#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// This process's memory use, read from Linux's `/proc/self` files, for memory scenarios.
///
/// proc(5): `/proc/[pid]/statm` gives sizes in pages, "resident" being the second field; `/proc/[pid]/status`
/// gives `VmHWM`, the peak resident set size in kB, which writing "5" to `/proc/[pid]/clear_refs` resets.
/// Every function returns `nil` where these files do not exist (macOS).
enum ProcessMemory {
    /// The resident set size now, in bytes, of this process or of process `pid` (a server under test).
    static func residentBytes(pid: Int32? = nil) -> Int? {
        guard let statm = readProcFile("/proc/\(pid.map(String.init) ?? "self")/statm") else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The peak resident set size since the process started or since ``resetPeakResidentBytes()``, in bytes.
    static func peakResidentBytes() -> Int? {
        guard let status = readProcFile("/proc/self/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.dropFirst("VmHWM:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
                .flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }

    /// Resets the peak resident set size to the current one, so a scenario measures only its own peak.
    @discardableResult
    static func resetPeakResidentBytes() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// Reads a small `/proc` file whole; their sizes are reported as 0, so read until end of file.
    private static func readProcFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
