import Foundation
import HearthProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// The hard memory limit `hearth serve` runs under, when one is set: the smallest of its address-space
/// and data limits (`ulimit -v`, `ulimit -d`) and its control group's (`memory.max` in cgroup v2,
/// `memory.limit_in_bytes` in v1). The transport holds request bodies in flight to a share of it
/// (`ServerLimits.memoryBytesPerRequestBodyByte`), so that a request too big for it is refused rather
/// than fatal (docs/reliability.md).
struct MemoryLimit: Equatable {
    let bytes: Int
    /// What set it, for the banner: `RLIMIT_AS`, `RLIMIT_DATA`, or the cgroup file.
    let source: String

    /// The request-body budget it leaves.
    var requestBodyBytesInFlightMax: Int { bytes / ServerLimits.memoryBytesPerRequestBodyByte }

    /// The process's limit now, or nil when none is set.
    static func current() -> MemoryLimit? {
        var found: [MemoryLimit] = []
        for (resource, name) in [(RLIMIT_AS, "RLIMIT_AS (ulimit -v)"), (RLIMIT_DATA, "RLIMIT_DATA (ulimit -d)")] {
            var limit = rlimit()
            if getrlimit(__rlimit_resource_t(resource.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {  // RLIM_INFINITY
                found.append(MemoryLimit(bytes: Int(clamping: limit.rlim_cur), source: name))
            }
        }
        if let group = controlGroupLimit() { found.append(group) }
        return found.min { $0.bytes < $1.bytes }
    }

    /// The memory limit of the control group this process is in, read from its files.
    private static func controlGroupLimit() -> MemoryLimit? {
        guard let membership = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return nil }
        for line in membership.split(separator: "\n") {
            // `0::/path` (v2), or `N:memory:/path` (v1).
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let candidates: [String]
            if fields[0] == "0" && fields[1].isEmpty {
                candidates = ["/sys/fs/cgroup\(fields[2])/memory.max"]
            } else if fields[1].split(separator: ",").contains("memory") {
                candidates = ["/sys/fs/cgroup/memory\(fields[2])/memory.limit_in_bytes"]
            } else {
                continue
            }
            for file in candidates {
                if let bytes = parseLimit(try? String(contentsOfFile: file, encoding: .utf8)) {
                    return MemoryLimit(bytes: bytes, source: file)
                }
            }
        }
        return nil
    }

    /// A cgroup limit file's number; nil for `max` and for v1's "no limit" (a number near Int64.max).
    static func parseLimit(_ text: String?) -> Int? {
        guard let text, let bytes = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes > 0 else { return nil }
        return bytes >= 1 << 62 ? nil : bytes
    }
}
