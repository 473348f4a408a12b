#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a library reports what its operator should see (a large namespace loading, stored rules that
/// no longer compile): passed in by whoever runs it, so libraries never write to a stream themselves.
/// `hearth serve` passes ``standardError``; tests pass ``silent`` or a recording closure.
public struct Log: Sendable {
    private let write: @Sendable (String) -> Void

    public init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }

    /// Writes one line (a newline is added).
    public func callAsFunction(_ line: String) { write(line) }

    /// Lines go to standard error, unbuffered, each written whole.
    public static let standardError = Log { line in
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = writeStandardError(base + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }

    public static let silent = Log { _ in }
}

private func writeStandardError(_ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(2, bytes, count)
}
