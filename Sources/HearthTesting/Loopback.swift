#if canImport(Glibc)
    public import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

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

    /// A port no one listens on now: bound once and released (another process could take it before the
    /// caller does; on loopback, in tests, it does not happen in practice).
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = address(port: 0)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
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
