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
///
/// A class over raw memory rather than a struct of `ContiguousArray`s: every append and slot
/// write checked uniqueness and capacity, and an insert cost ≈ 250 instructions under callgrind
/// (one per distinct uid, email or push-ID-free long key); the table is private to one parse.
final class JSONKeyInterner {
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

    /// `count` strings and their entries, in insertion order, with room for half as many as
    /// there are slots. Nothing is allocated until the first `find`: most parses are small
    /// write bodies that never reach a long key.
    private var strings: UnsafeMutablePointer<String>?
    private var entries: UnsafeMutablePointer<Entry>?
    private var count = 0
    /// Per slot: 1 + index into `strings`, or 0 when empty; `mask + 1` slots.
    private var slots: UnsafeMutablePointer<Int32>?
    private var mask = -1

    init() {}

    deinit {
        strings?.deinitialize(count: count)
        strings?.deallocate()
        entries?.deallocate()
        slots?.deallocate()
    }

    /// Hashes every byte (a hash of only some would let crafted keys collide), 8 at a time with a
    /// multiplicative mix; the last word overlaps the one before it, which needs at least 8 bytes:
    /// interned strings are longer than `inlineLengthMax`.
    ///
    /// Strings of 16–32 bytes (uids, push IDs, emails) take four words, the last two overlapping
    /// the first two when shorter than 32, mixed in pairs by full-width multiplies: a third of
    /// the instructions of the loop, on the lookup every uid key makes.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let raw = UnsafeRawPointer(bytes.baseAddress!)
        let count = bytes.count
        if count >= 16 && count <= 32 {
            let w0 = raw.loadUnaligned(as: UInt64.self), w1 = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            let w2 = raw.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self)
            let w3 = raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            let a = (w0 ^ 0xA076_1D64_78BD_642F).multipliedFullWidth(by: w1 ^ 0xE703_7ED1_A0B4_28DB)
            let b = (w2 ^ 0x8EBC_6AF0_9C88_C6E3 ^ UInt64(truncatingIfNeeded: count))
                .multipliedFullWidth(by: w3 ^ 0x5899_65CC_7537_4CC3)
            let mixed = (a.high ^ a.low) &+ (b.high ^ b.low)
            return mixed ^ (mixed >> 31)
        }
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
        if count >= 16 && count <= 32 {
            // The words `hash` reads, which cover every byte.
            let x = (ra.loadUnaligned(as: UInt64.self) ^ rb.loadUnaligned(as: UInt64.self))
                | (ra.loadUnaligned(fromByteOffset: 8, as: UInt64.self) ^ rb.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            let y = (ra.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self) ^ rb.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self))
                | (ra.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) ^ rb.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
            return x | y == 0
        }
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
    func find(_ bytes: UnsafeBufferPointer<UInt8>) -> (String?, Probe) {
        if (count + 1) * 2 > mask + 1 { grow() }
        let slots = self.slots.unsafelyUnwrapped, entries = self.entries.unsafelyUnwrapped
        let h = Self.hash(bytes)
        let start = bytes.baseAddress!, byteCount = bytes.count
        var slot = Int(truncatingIfNeeded: h) & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { break }
            let candidate = entries[entry - 1]
            if candidate.hash == h && candidate.count == byteCount && Self.equal(candidate.start, start, count: byteCount) {
                return (strings.unsafelyUnwrapped[entry - 1], Probe(slot: slot, entry: candidate))
            }
            slot = (slot + 1) & mask
        }
        return (nil, Probe(slot: slot, entry: Entry(hash: h, start: start, count: byteCount)))
    }

    func insert(_ string: String, at probe: Probe) {
        // `find` grew the table so that a slot is free; the arrays follow the slot count.
        (strings.unsafelyUnwrapped + count).initialize(to: string)
        (entries.unsafelyUnwrapped + count).initialize(to: probe.entry)
        count += 1
        slots.unsafelyUnwrapped[probe.slot] = Int32(count)
    }

    /// Doubles the slots (at least 256) and the arrays to half of them, rehashing every entry.
    private func grow() {
        let slotCount = max(256, (mask + 1) * 2)
        let newSlots = UnsafeMutablePointer<Int32>.allocate(capacity: slotCount)
        newSlots.initialize(repeating: 0, count: slotCount)
        slots?.deallocate()
        slots = newSlots
        mask = slotCount - 1
        let newStrings = UnsafeMutablePointer<String>.allocate(capacity: slotCount / 2)
        let newEntries = UnsafeMutablePointer<Entry>.allocate(capacity: slotCount / 2)
        if let strings, let entries {
            newStrings.moveInitialize(from: strings, count: count)
            newEntries.moveInitialize(from: entries, count: count)
            strings.deallocate()
            entries.deallocate()
        }
        strings = newStrings
        entries = newEntries
        for index in 0..<count {
            var slot = Int(truncatingIfNeeded: newEntries[index].hash) & mask
            while newSlots[slot] != 0 { slot = (slot + 1) & mask }
            newSlots[slot] = Int32(index + 1)
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
