/// Shares one `String` among equal object keys within a single parse.
///
/// Swift stores strings of up to 15 UTF-8 bytes inline; each longer one is its own heap object.
/// Firebase data repeats long keys (28-byte uids in every votes or members map), so without
/// sharing a parsed tree can hold thousands of copies of the same uid. Open addressing over a
/// power-of-two table; strings are compared byte for byte, never by Unicode equivalence.
///
/// Entries point at the input bytes the string was made from rather than at the `String`: the
/// parser owns those bytes for the whole parse, and comparing raw memory avoids opening a
/// `String`'s UTF-8 view on every probe (which, with the retain of the candidate, made a lookup
/// cost ~290 instructions under callgrind; now ~40).
struct JSONKeyInterner {
    /// Strings this short are inline in `String` and gain nothing from interning.
    static var inlineLengthMax: Int { 15 }
    /// Longest string value worth interning: ids, emails and short labels repeat, prose rarely does.
    static var valueLengthMax: Int { 48 }

    struct Entry {
        var hash: UInt64
        /// The bytes the string was made from, inside the parser's input (valid for the parse).
        var start: UnsafePointer<UInt8>
        var count: Int
    }

    var strings: ContiguousArray<String> = []
    var entries: ContiguousArray<Entry> = []
    /// Per slot: 1 + index into `strings`, or 0 when empty.
    var slots: ContiguousArray<Int32> = []
    var mask = 0

    /// Hashes every byte (a hash of only some would let crafted keys collide), 8 at a time with a
    /// multiplicative mix; the last word overlaps the one before it, which needs at least 8 bytes:
    /// interned strings are longer than `inlineLengthMax`.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let raw = UnsafeRawPointer(bytes.baseAddress!)
        let count = bytes.count
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: count)
        var i = 0
        while i + 8 < count {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 29
            i += 8
        }
        h = (h ^ raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)) &* 0x94D0_49BB_1331_11EB
        return h ^ (h >> 31)
    }

    /// Byte equality, 8 bytes at a time (the generic `elementsEqual` goes byte by byte). Both
    /// sides have the same length, at least 8.
    @inline(__always)
    static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, count: Int) -> Bool {
        let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
        var i = 0
        while i + 8 < count {
            if ra.loadUnaligned(fromByteOffset: i, as: UInt64.self) != rb.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i += 8
        }
        return ra.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            == rb.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    }

    /// Where `find` stopped: the slot a new string for those bytes goes in.
    struct Probe {
        var slot: Int
        var entry: Entry
    }

    /// The string already made from these bytes in this parse, or where to `insert` it. `bytes`
    /// must be longer than `inlineLengthMax` and stay valid for the parse; `insert` must follow
    /// before the next `find`.
    @inline(__always)
    mutating func find(_ bytes: UnsafeBufferPointer<UInt8>) -> (String?, Probe) {
        if (strings.count + 1) * 2 > slots.count { grow() }
        let h = Self.hash(bytes)
        let start = bytes.baseAddress!, count = bytes.count
        var slot = Int(truncatingIfNeeded: h) & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { break }
            let candidate = entries[entry - 1]
            if candidate.hash == h && candidate.count == count && Self.equal(candidate.start, start, count: count) {
                return (strings[entry - 1], Probe(slot: slot, entry: candidate))
            }
            slot = (slot + 1) & mask
        }
        return (nil, Probe(slot: slot, entry: Entry(hash: h, start: start, count: count)))
    }

    mutating func insert(_ string: String, at probe: Probe) {
        strings.append(string)
        entries.append(probe.entry)
        slots[probe.slot] = Int32(strings.count)
    }

    private mutating func grow() {
        let capacity = max(256, slots.count * 2)
        slots = ContiguousArray(repeating: 0, count: capacity)
        mask = capacity - 1
        for index in entries.indices {
            var slot = Int(truncatingIfNeeded: entries[index].hash) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index + 1)
        }
    }
}

/// The last string made from each of a few hundred short byte sequences, for strings short
/// enough (≤ 15 bytes) to be stored inline in `String`.
///
/// Such strings cost no allocation, but making one still validates and copies through the
/// standard library (`String(decoding:as:)`), and the same few field names ("createdAt", "text",
/// "author") open most objects: a direct-mapped cache answers them with two word comparisons.
struct JSONShortStringCache {
    static var slotCount: Int { 512 }

    /// Per slot: the bytes, zero-padded, as two little-endian words; the length in the top byte
    /// of the second (byte 15 is always padding).
    var words: ContiguousArray<(UInt64, UInt64)>
    var strings: ContiguousArray<String>

    /// A disabled cache has no slots: making and freeing 512 strings costs more than a small
    /// document (a REST body) takes to parse, about 17k instructions per parse.
    init(enabled: Bool = true) {
        // All-zero words stand for the empty string, so empty slots are correct entries.
        words = enabled ? ContiguousArray(repeating: (0, 0), count: Self.slotCount) : []
        strings = enabled ? ContiguousArray(repeating: "", count: Self.slotCount) : []
    }

    var isEnabled: Bool { !words.isEmpty }

    /// Documents smaller than this parse without the cache.
    static var documentBytesMin: Int { 4096 }

    /// The two words for `count` (≤ 15) bytes at `start`; 16 bytes must be readable there.
    @inline(__always)
    static func words(at start: UnsafeRawPointer, count: Int) -> (UInt64, UInt64) {
        let low = UInt64(littleEndian: start.loadUnaligned(as: UInt64.self))
        let high = UInt64(littleEndian: start.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let lowMask: UInt64 = count >= 8 ? ~0 : (1 << UInt64(8 * count)) &- 1
        let highMask: UInt64 = count <= 8 ? 0 : (1 << UInt64(8 * (count - 8))) &- 1
        return (low & lowMask, high & highMask | UInt64(count) << 56)
    }

    @inline(__always)
    static func slot(_ words: (UInt64, UInt64)) -> Int {
        let h = (words.0 ^ (words.1 &* 0x9E37_79B9_7F4A_7C15)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: h >> 55)
    }
}
