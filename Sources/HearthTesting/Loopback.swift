#if canImport(Glibc)
    public import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif
import Synchronization

/// TCP on 127.0.0.1 for tests and benchmarks that start servers of their own: a free port to give one,
/// and whether it accepts connections yet.
public enum Loopback {
    /// The IPv4 address `host`:`port` (127.0.0.1 unless told; 0 is every address).
    public static func address(port: Int, host: UInt32 = 0x7F00_0001) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = host.bigEndian
        return address
    }

    /// Where ``freePort()`` looks: below Linux's ephemeral range (32768–60999, `ip_local_port_range`),
    /// from which the kernel picks the local port of every outgoing connection. A port that bind(0) gave
    /// out is in that range, so any connection opened meanwhile (a test's client, PostgreSQL's own) could
    /// take it before the server binds it: seen as "Address already in use" on a busy machine.
    static let candidatePorts = 20_000..<32_768

    /// Ports handed out by this process, never handed out twice (tests start servers concurrently).
    private static let handedOut = Mutex<Set<Int>>([])

    /// A port no one listens on or is bound to now, outside the ephemeral range, and not given to
    /// another caller in this process. Another process could still take it before the caller binds it:
    /// callers that start servers retry with another port when the bind fails.
    public static func freePort() -> Int {
        while true {
            let port = Int.random(in: candidatePorts)
            let fresh = handedOut.withLock { ports in ports.insert(port).inserted }
            guard fresh, canBind(port) else { continue }
            return port
        }
    }

    /// Whether 127.0.0.1:`port` can be bound now (nobody listens on it or holds it).
    static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = address(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return bound == 0
    }

    /// Opens a TCP connection to 127.0.0.1:`port`, returning the socket or -1 with `errno` set.
    public static func connect(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = address(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #else
                    Darwin.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #endif
            }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            errno = error
            return -1
        }
        return fd
    }

    /// Whether something accepts connections on 127.0.0.1:`port` now.
    public static func canConnect(_ port: Int) -> Bool {
        let fd = connect(port: port)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }
}
