public import Foundation

/// Starts threads whose names the operating system shows (`top -H`, `/proc/<pid>/task/*/comm`, gdb):
/// Foundation's `Thread.name` does not reach the kernel on Linux. Linux keeps 15 bytes of a name.
public enum NamedThread {
    /// Runs `body` on a new thread named `name` (with a stack of `stackSize` bytes when given).
    @discardableResult
    public static func start(_ name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> Thread {
        let thread = Thread {
            nameThisThread(name)
            body()
        }
        thread.name = name
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
        return thread
    }

    /// Names the calling thread where Foundation does not (Linux: `/proc/thread-self/comm`, which is
    /// what `pthread_setname_np` writes; Glibc's Swift module does not offer that call).
    private static func nameThisThread(_ name: String) {
        #if os(Linux)
            let fd = open("/proc/thread-self/comm", O_WRONLY)
            guard fd >= 0 else { return }
            defer { close(fd) }
            let bytes = Array(name.utf8.prefix(15))
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        #endif
    }
}
