#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file descriptor as a `TextOutputStream`, so commands are written against any stream and tested with a
/// `String`.
///
/// It writes with write(2), unbuffered, rather than through C's `stdout` and `stderr` globals, which Swift 6
/// rejects as shared mutable state.
struct FileDescriptorOutputStream: TextOutputStream {
    let descriptor: Int32

    mutating func write(_ string: String) {
        var bytes = Array(string.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { writeBytes(to: descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return  // A closed pipe or full disk: nothing useful is left to do with the text.
            }
            bytes = bytes.dropFirst(written)
        }
    }
}

extension FileDescriptorOutputStream {
    /// Standard output: a command's result.
    static var standardOutput: Self { Self(descriptor: 1) }
    /// Standard error: diagnostics, kept apart from a command's result.
    static var standardError: Self { Self(descriptor: 2) }
}

/// write(2), under a name that the stream's own `write(_:)` does not shadow.
private func writeBytes(to descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
