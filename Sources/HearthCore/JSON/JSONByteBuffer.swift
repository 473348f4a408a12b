/// A growable byte buffer for decoding strings with escapes.
///
/// A class over raw memory instead of `[UInt8]`: every `Array.append` checks that the array is
/// uniquely referenced (a runtime call) and its capacity, and clearing it goes through
/// `replaceSubrange`; that bookkeeping was about half the cost of decoding an escaped string
/// outside the standard library's `String` creation (callgrind).
final class JSONByteBuffer {
    private(set) var base: UnsafeMutablePointer<UInt8>?
    private(set) var count = 0
    private var capacity = 0

    deinit { base?.deallocate() }

    @inline(__always)
    func removeAll() { count = 0 }

    /// Room for `n` more bytes.
    @inline(__always)
    func reserve(_ n: Int) {
        if count + n > capacity { grow(to: count + n) }
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1)
        base.unsafelyUnwrapped[count] = byte
        count += 1
    }

    @inline(__always)
    func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base.unsafelyUnwrapped + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// The bytes appended since the last `removeAll`, valid until the next change.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    private func grow(to minimum: Int) {
        let newCapacity = max(minimum, capacity * 2, 256)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        if let base {
            newBase.initialize(from: base, count: count)
            base.deallocate()
        }
        base = newBase
        capacity = newCapacity
    }
}
