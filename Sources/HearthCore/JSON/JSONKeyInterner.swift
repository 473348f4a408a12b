/// Shares one `String` among equal object keys within a single parse.
///
/// Swift stores strings of up to 15 UTF-8 bytes inline; each longer one is its own heap object.
/// Firebase data repeats long keys (28-byte uids in every votes or members map), so without
/// sharing a parsed tree can hold thousands of copies of the same uid. Open addressing over a
/// power-of-two table; strings are compared byte for byte, never by Unicode equivalence.
///
/// Lookups are bound by cache misses, not instructions: a 25 MB document repeats tens of
/// thousands of uids in random order while the parse streams input and tree through the caches.
/// So a hit must not touch the shared string's heap object at all:
/// * Each slot is one cache line holding the tag (hash and length), the string, and its first
///   32 bytes, so a probe compares the input with the slot alone (longer strings, rare, compare
///   with the string's own storage).
/// * A hit lends the string: `find` returns a bitwise copy whose retain is owed and counted in
///   the slot, and `settle()` pays every owed retain at once, each string's while its line is
///   in cache. A retain per hit was an atomic write to a line that is almost never cached.
/// Together they took core.parse from 4.5× to 5.3× JSONSerialization (perf samples of both
/// parses in the same runs); either one alone gained nothing, since the other still touched the
/// string's line on every hit.
///
/// Lending makes the reference count of a shared string lower than its number of copies until
/// `settle()`, so nothing the parser read may be destroyed before it settles: `JSONParser`
/// settles before it returns its tree and before every error it throws (which unwinds the
/// unfinished values), and keeps what it drops on the way (duplicates, empty children, a
/// replaced `.value`) until it is destroyed itself. The table keeps one reference per string,
/// so lent copies are always valid to read.
///
/// A class over raw memory rather than a struct of `ContiguousArray`s: every append and slot
/// write checked uniqueness and capacity; the table is private to one parse.
final class JSONKeyInterner {
    /// Strings this short are inline in `String` and gain nothing from interning.
    static var inlineLengthMax: Int { 15 }
    /// Longest string value worth interning: ids, emails and short labels repeat, prose rarely does.
    static var valueLengthMax: Int { 48 }
    /// Strings up to this long are compared with the copy of their bytes in the slot.
    static var slotBytesMax: Int { 32 }

    /// One slot, one 64-byte cache line: `tag` is 0 when the slot is empty; otherwise `string`
    /// is initialized.
    struct Slot {
        /// The hash in the high 48 bits, the UTF-8 length in the low 16 (interned strings are
        /// 16 bytes or more, so an occupied slot's tag is never 0).
        var tag: UInt64
        var string: String
        /// The string's first `slotBytesMax` bytes, zero-padded; only compared for strings that fit.
        var bytes: (UInt64, UInt64, UInt64, UInt64)
        /// Copies `find` has lent since the last `settle()`, whose retains are owed.
        var lent: UInt32
    }

    /// `mask + 1` slots, at most three quarters of them in use. Nothing is allocated until the
    /// first `find`: most parses are small write bodies that never reach a long key.
    private var slots: UnsafeMutablePointer<Slot>?
    private var count = 0
    private var mask = -1
    /// Slots whose `lent` is not 0, each once: what `settle()` visits.
    private var indebted: [Int] = []
    /// Scratch for turning a slot's string bits into a lent copy, and for leaking paid retains.
    private let scratch = UnsafeMutablePointer<String>.allocate(capacity: 1)

    init() {}

    deinit {
        settle()
        scratch.deallocate()
        guard let slots else { return }
        for slot in 0...mask where Self.tag(at: slots + slot) != 0 {
            (slots + slot).deinitialize(count: 1)
        }
        UnsafeMutableRawPointer(slots).deallocate()
    }

    /// Pays every owed retain: afterwards each copy `find` returned holds its own reference.
    /// Costs one pass over the slots that lent since the last call.
    func settle() {
        guard !indebted.isEmpty, let slots else { return }
        for slot in indebted {
            let entry = slots + slot
            // Initializing over the scratch's previous value leaks it: one retain each.
            for _ in 0..<entry.pointee.lent { scratch.initialize(to: entry.pointee.string) }
            entry.pointee.lent = 0
        }
        indebted.removeAll(keepingCapacity: true)
    }

    /// The tag of a slot, read without touching the string of an empty slot.
    @inline(__always)
    static func tag(at slot: UnsafeMutablePointer<Slot>) -> UInt64 {
        UnsafeRawPointer(slot).load(as: UInt64.self)
    }

    /// Lengths past 65,535 (only unvalidated documents have such keys) share the length field;
    /// the comparison still tells them apart.
    @inline(__always)
    static func tag(hash: UInt64, count: Int) -> UInt64 {
        hash << 16 | UInt64(truncatingIfNeeded: min(count, 0xFFFF))
    }

    /// The slot a probe for `tag` starts at: the hash bits the tag kept.
    @inline(__always)
    static func home(of tag: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: tag >> 16) & mask
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

    /// Where `find` stopped: the slot a new string for those bytes goes in, and its tag.
    struct Probe {
        var slot: Int
        var tag: UInt64
    }

    /// The string already made from these bytes in this parse, lent (see the type's notes), or
    /// where to `insert` it. `bytes` must be longer than `inlineLengthMax`; `insert` must follow
    /// before the next `find`.
    @inline(__always)
    func find(_ bytes: UnsafeBufferPointer<UInt8>) -> (String?, Probe) {
        if (count + 1) * 4 > (mask + 1) * 3 { grow() }
        let slots = self.slots.unsafelyUnwrapped
        let byteCount = bytes.count
        let tag = Self.tag(hash: Self.hash(bytes), count: byteCount)
        let start = bytes.baseAddress!
        var slot = Self.home(of: tag, mask: mask)
        while true {
            let candidate = slots + slot
            let candidateTag = Self.tag(at: candidate)
            if candidateTag == 0 { break }
            if candidateTag == tag && Self.holds(candidate, start, count: byteCount) {
                return (lend(candidate, at: slot), Probe(slot: slot, tag: tag))
            }
            slot = (slot + 1) & mask
        }
        return (nil, Probe(slot: slot, tag: tag))
    }

    /// Whether the occupied slot's string is these bytes, given that the tags match.
    @inline(__always)
    static func holds(_ slot: UnsafeMutablePointer<Slot>, _ bytes: UnsafePointer<UInt8>, count: Int) -> Bool {
        if count <= slotBytesMax {
            // The tag's length field is exact below 65,536; the zero padding is never compared.
            return withUnsafePointer(to: &slot.pointee.bytes) {
                equal(UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), bytes, count: count)
            }
        }
        // Strings of 16 bytes or more made by the parser are native, contiguous UTF-8: the closure
        // reads the string's own storage.
        return slot.pointee.string.utf8.withContiguousStorageIfAvailable { stored in
            stored.count == count && equal(stored.baseAddress!, bytes, count: count)
        } == true
    }

    /// A copy of the slot's string without a retain, counted in the slot until `settle()`.
    @inline(__always)
    private func lend(_ slot: UnsafeMutablePointer<Slot>, at index: Int) -> String {
        if slot.pointee.lent == 0 { indebted.append(index) }
        slot.pointee.lent += 1
        if slot.pointee.lent == .max { settle() }
        // The string's bits, moved out of the scratch: a value nobody retained.
        withUnsafeMutablePointer(to: &slot.pointee.string) {
            UnsafeMutableRawPointer(scratch).copyMemory(from: $0, byteCount: MemoryLayout<String>.size)
        }
        return scratch.move()
    }

    func insert(_ string: String, at probe: Probe) {
        // `find` grew the table so that a slot is free.
        var slot = Slot(tag: probe.tag, string: string, bytes: (0, 0, 0, 0), lent: 0)
        var string = string
        string.withUTF8 { utf8 in
            withUnsafeMutableBytes(of: &slot.bytes) { inline in
                inline.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8).prefix(inline.count)))
            }
        }
        (slots.unsafelyUnwrapped + probe.slot).initialize(to: slot)
        count += 1
    }

    /// Doubles the slots (at least 256), moving every string to its slot in the new table.
    /// Settles first: the debts are recorded by slot index.
    private func grow() {
        settle()
        let slotCount = max(256, (mask + 1) * 2)
        // Cache-line aligned, so each slot is exactly one line.
        let newSlots = UnsafeMutableRawPointer.allocate(
            byteCount: slotCount * MemoryLayout<Slot>.stride, alignment: 64)
        newSlots.initializeMemory(as: UInt8.self, repeating: 0, count: slotCount * MemoryLayout<Slot>.stride)
        let typedSlots = newSlots.bindMemory(to: Slot.self, capacity: slotCount)
        let newMask = slotCount - 1
        if let slots {
            for old in 0...mask {
                let tag = Self.tag(at: slots + old)
                if tag == 0 { continue }
                var slot = Self.home(of: tag, mask: newMask)
                while Self.tag(at: typedSlots + slot) != 0 { slot = (slot + 1) & newMask }
                (typedSlots + slot).moveInitialize(from: slots + old, count: 1)
            }
            UnsafeMutableRawPointer(slots).deallocate()
        }
        slots = typedSlots
        mask = newMask
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
