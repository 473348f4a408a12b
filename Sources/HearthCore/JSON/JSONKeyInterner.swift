/// Shares one `String` among equal object keys within a single parse.
///
/// Swift stores strings of up to 15 UTF-8 bytes inline; each longer one is its own heap object.
/// Firebase data repeats long keys (28-byte uids in every votes or members map), so without
/// sharing a parsed tree can hold thousands of copies of the same uid. Open addressing over a
/// power-of-two table; strings are compared byte for byte, never by Unicode equivalence.
struct JSONKeyInterner {
    /// Strings this short are inline in `String` and gain nothing from interning.
    static var inlineLengthMax: Int { 15 }
    /// Longest string value worth interning: ids, emails and short labels repeat, prose rarely does.
    static var valueLengthMax: Int { 48 }

    var strings: [String] = []
    /// Per slot: 1 + index into `strings`, or 0 when empty.
    var slots: [Int32] = []
    var hashes: [UInt64] = []
    var mask = 0

    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        // 8 bytes at a time with a multiplicative mix: keys here are 16–768 bytes of ASCII, and
        // quality only matters enough to keep probe chains short.
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        let raw = UnsafeRawBufferPointer(bytes)
        var i = 0
        while i + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            h = (h ^ word) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 29
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < raw.count {
            tail |= UInt64(raw[i]) << shift
            shift += 8
            i += 1
        }
        h = (h ^ tail) &* 0x94D0_49BB_1331_11EB
        return h ^ (h >> 31)
    }

    /// Byte equality, 8 bytes at a time (the generic `elementsEqual` goes byte by byte).
    @inline(__always)
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        let ra = UnsafeRawBufferPointer(a), rb = UnsafeRawBufferPointer(b)
        var i = 0
        while i + 8 <= ra.count {
            if ra.loadUnaligned(fromByteOffset: i, as: UInt64.self) != rb.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i += 8
        }
        while i < ra.count {
            if ra[i] != rb[i] { return false }
            i += 1
        }
        return true
    }

    func lookUp(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard !slots.isEmpty else { return nil }
        let h = Self.hash(bytes)
        var slot = Int(truncatingIfNeeded: h) & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { return nil }
            if hashes[entry - 1] == h {
                let candidate = strings[entry - 1]
                let same = candidate.utf8.withContiguousStorageIfAvailable { stored in
                    Self.equal(stored, bytes)
                } ?? candidate.utf8.elementsEqual(bytes)
                if same { return candidate }
            }
            slot = (slot + 1) & mask
        }
    }

    mutating func insert(_ string: String, _ bytes: UnsafeBufferPointer<UInt8>) {
        if (strings.count + 1) * 2 > slots.count { grow() }
        let h = Self.hash(bytes)
        strings.append(string)
        hashes.append(h)
        place(strings.count - 1, hash: h)
    }

    private mutating func place(_ entry: Int, hash h: UInt64) {
        var slot = Int(truncatingIfNeeded: h) & mask
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = Int32(entry + 1)
    }

    private mutating func grow() {
        let capacity = max(256, slots.count * 2)
        slots = Array(repeating: 0, count: capacity)
        mask = capacity - 1
        for entry in strings.indices { place(entry, hash: hashes[entry]) }
    }
}
