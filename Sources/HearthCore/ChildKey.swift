/// The name of a child in the tree: one segment of a `Path`.
///
/// Keys compare in Firebase key order (docs/protocol.md §5.6), not Swift's `String` order: keys that
/// are 32-bit integers come first, numerically; the rest compare by UTF-16 code units, as JavaScript's
/// `<` and Java's `String.compareTo` do.
///
///     ChildKey("2") < ChildKey("10")      // true: integer keys compare as numbers
///     ChildKey("10") < ChildKey("010")    // true: equal value, shorter first
///     ChildKey("🐵") < ChildKey("\u{E000}") // true: UTF-16 order puts surrogates below U+E000
public struct ChildKey: Hashable, ThreeWayComparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The key's text.
    public let string: String
    /// The key's place in key order coarsened to one word (`KeyOrder.orderWord`): unequal words
    /// decide a comparison without touching the strings. Searches in big maps compare keys
    /// dozens of times per write, and the full comparison was a quarter of a write (callgrind);
    /// the word costs 8 bytes per stored key.
    @usableFromInline let order: UInt64

    /// Wraps a key without validating it; see `KeyValidation` for the rules writes must follow.
    @inlinable
    public init(_ string: String) {
        self.string = string
        self.order = KeyOrder.orderWord(of: string)
    }

    /// Wraps a key whose order word the caller already computed from the same bytes.
    @inlinable
    init(_ string: String, order: UInt64) {
        self.string = string
        self.order = order
    }

    public init(stringLiteral value: String) { self.init(value) }

    public var description: String { string }

    // Keys are equal when their bytes are: Swift's `String ==` treats canonically equivalent
    // spellings (NFC "é", NFD "e\u{301}") as equal, but Firebase compares code units and never
    // normalizes, so those are two different children.
    //
    // Through the contiguous bytes rather than `utf8.elementsEqual`, which steps the UTF-8 views
    // one index at a time: ~1,000 instructions for two 20-byte keys under callgrind, where the
    // parser checks neighbours for duplicates.
    @inlinable
    public static func == (lhs: ChildKey, rhs: ChildKey) -> Bool {
        guard lhs.order == rhs.order else { return false }
        let count = lhs.string.utf8.count
        guard count == rhs.string.utf8.count else { return false }
        if lhs.wordHoldsAllBytes(count: count) { return true }
        var a = lhs.string, b = rhs.string
        return a.withUTF8 { pa in b.withUTF8 { pb in KeyOrder.bytesEqual(pa, pb) } }
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        var s = string
        s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    @inlinable
    public static func < (lhs: ChildKey, rhs: ChildKey) -> Bool { compare(lhs, rhs) < 0 }

    /// Three-way comparison in Firebase key order.
    @inlinable
    public static func compare(_ lhs: ChildKey, _ rhs: ChildKey) -> Int {
        if lhs.order != rhs.order { return lhs.order < rhs.order ? -1 : 1 }
        // Equal words: a search that finds its key lands here once per level, so settle equality
        // cheaply before the full comparison.
        let count = lhs.string.utf8.count
        if count == rhs.string.utf8.count && lhs.wordHoldsAllBytes(count: count) { return 0 }
        return KeyOrder.compare(lhs.string, rhs.string)
    }

    /// True when the order word is the whole key: a non-integer ASCII key of at most 7 bytes, so
    /// two such keys of the same length with equal words are equal.
    @inlinable
    func wordHoldsAllBytes(count: Int) -> Bool {
        count <= 7 && order & (1 << 63) != 0 && order & 0x0080_8080_8080_8080 == 0
    }

    /// The key's value when it is a 32-bit integer key (sorted numerically before other keys).
    public var integerValue: Int64? { KeyOrder.integerValue(of: string) }
}

/// Firebase key order and the UTF-16 string order it builds on.
public enum KeyOrder {
    /// A key's place in Firebase key order, coarsened to one word: if `compare(a, b) < 0` then
    /// `orderWord(a) <= orderWord(b)`, so unequal words decide a comparison and only equal ones
    /// need the strings.
    ///
    /// Integer keys map to `value + 2^31` (below 2^32, so before every other key, numerically;
    /// spellings of one value tie). Other keys set bit 63 and keep their first 7 bytes,
    /// big-endian and zero-padded, in the low 56 bits. Byte order is UTF-16 order only while both
    /// keys are ASCII, so the first non-ASCII byte becomes 0x80 and the bytes after it zero: that
    /// sorts after every ASCII byte and ties with every other non-ASCII character, leaving those
    /// to the full comparison.
    @inlinable
    public static func orderWord(ofUTF8 raw: UnsafeBufferPointer<UInt8>) -> UInt64 {
        // No length cut-off: leading zeros are free, so "-02147483648" is an integer key.
        if let first = raw.first, first == UInt8(ascii: "-") || (first &- 48) < 10,
            let value = integerValue(ofUTF8: raw)
        {
            return UInt64(bitPattern: value &+ 0x8000_0000)
        }
        if raw.count >= 8, let base = raw.baseAddress {
            // Eight bytes in one load: when the first seven are ASCII, the word is those seven,
            // big-endian, under bit 63.
            let word = UInt64(bigEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self))
            if word & 0x8080_8080_8080_8000 == 0 { return (1 << 63) | (word >> 8) }
        }
        var order: UInt64 = 1 << 63
        var shift: UInt64 = 48
        var i = 0
        let n = Swift.min(raw.count, 7)
        while i < n {
            let byte = raw[i]
            if byte >= 0x80 {
                order |= 0x80 << shift
                break
            }
            order |= UInt64(byte) << shift
            shift &-= 8
            i += 1
        }
        return order
    }

    @inlinable
    public static func orderWord(of key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { orderWord(ofUTF8: $0) }
    }

    /// Three-way comparison of two keys in Firebase key order: negative, zero or positive.
    @inlinable
    public static func compare(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { pa in b.withUTF8 { pb in compare(utf8: pa, pb) } }
    }

    /// Key order over the keys' UTF-8 bytes.
    @inlinable
    public static func compare(utf8 pa: UnsafeBufferPointer<UInt8>, _ pb: UnsafeBufferPointer<UInt8>) -> Int {
        let ai = integerValue(ofUTF8: pa)
        let bi = integerValue(ofUTF8: pb)
        switch (ai, bi) {
        case let (x?, y?):
            if x != y { return x < y ? -1 : 1 }
            // Equal value ("7" and "07"): the shorter spelling first, as the JS SDK's nameCompare.
            // Integer keys are ASCII, so byte counts are UTF-16 lengths. Same value and length
            // ("-0" and "00") are equal to the JS SDK, but a map needs a total order consistent
            // with `==`, so bytes break that tie.
            if pa.count != pb.count { return pa.count < pb.count ? -1 : 1 }
            return compareUTF16(utf8: pa, pb)
        case (.some, nil): return -1
        case (nil, .some): return 1
        case (nil, nil): return compareUTF16(utf8: pa, pb)
        }
    }

    /// The value of a key that matches the JS SDK's integer pattern `^-?0*\d{1,10}$` and fits in a
    /// 32-bit signed integer; nil for every other key.
    @inlinable
    public static func integerValue(of key: String) -> Int64? {
        let utf8 = key.utf8
        if let fast = utf8.withContiguousStorageIfAvailable({ integerValue(ofUTF8: $0) }) { return fast }
        return Array(utf8).withUnsafeBufferPointer { integerValue(ofUTF8: $0) }
    }

    @inlinable
    static func integerValue(ofUTF8 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let first = bytes.first, first == UInt8(ascii: "-") || (first &- 48) < 10 else { return nil }
        var index = 0
        let negative = first == UInt8(ascii: "-")
        if negative { index = 1 }
        guard index < bytes.count else { return nil }
        // Leading zeros are free; at most 10 significant digits follow.
        while index < bytes.count - 1, bytes[index] == UInt8(ascii: "0") { index += 1 }
        let significant = bytes.count - index
        guard significant >= 1, significant <= 10 else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- 48
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
            index += 1
        }
        if negative { value = -value }
        return Limits.integerKeyRange.contains(value) ? value : nil
    }

    /// Byte equality of two buffers of the same length, eight bytes at a time (the generic
    /// `elementsEqual` steps an iterator per byte: 11% of a windowed query update under callgrind).
    @inlinable
    static func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = a.count
        guard count == b.count else { return false }
        guard count > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        let ra = UnsafeRawPointer(pa), rb = UnsafeRawPointer(pb)
        var i = 0
        while i + 8 <= count {
            if ra.loadUnaligned(fromByteOffset: i, as: UInt64.self) != rb.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i += 8
        }
        while i < count {
            if pa[i] != pb[i] { return false }
            i += 1
        }
        return true
    }

    /// Three-way comparison of two strings by UTF-16 code units (JavaScript's `<`).
    ///
    /// Compares UTF-8 bytes, which order code points; UTF-16 differs from code-point order only when
    /// a character above U+FFFF (a surrogate pair, D800–DBFF first) meets one in U+E000–U+FFFF, so
    /// only the first differing character needs a closer look.
    @inlinable
    public static func compareUTF16(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { pa in b.withUTF8 { pb in compareUTF16(utf8: pa, pb) } }
    }

    @inlinable
    public static func compareUTF16(utf8 pa: UnsafeBufferPointer<UInt8>, _ pb: UnsafeBufferPointer<UInt8>) -> Int {
        let shared = min(pa.count, pb.count)
        var i = 0
        if shared >= 8, let ba = pa.baseAddress, let bb = pb.baseAddress {
            let ra = UnsafeRawPointer(ba), rb = UnsafeRawPointer(bb)
            while i + 8 <= shared,
                ra.loadUnaligned(fromByteOffset: i, as: UInt64.self) == rb.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            {
                i += 8
            }
        }
        while i < shared, pa[i] == pb[i] { i += 1 }
        if i == shared { return pa.count == pb.count ? 0 : (pa.count < pb.count ? -1 : 1) }
        if pa[i] < 0x80 && pb[i] < 0x80 { return pa[i] < pb[i] ? -1 : 1 }
        var start = i
        while start > 0, pa[start] & 0xC0 == 0x80 { start -= 1 }
        let ca = decodeScalar(pa, at: start)
        let cb = decodeScalar(pb, at: start)
        let la = utf16Lead(ca), lb = utf16Lead(cb)
        if la != lb { return la < lb ? -1 : 1 }
        return ca == cb ? 0 : (ca < cb ? -1 : 1)
    }

    @inlinable
    static func utf16Lead(_ scalar: UInt32) -> UInt32 {
        scalar >= 0x10000 ? 0xD800 + ((scalar - 0x10000) >> 10) : scalar
    }

    @inlinable
    static func decodeScalar(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt32 {
        let lead = UInt32(bytes[index])
        func continuation(_ offset: Int) -> UInt32 {
            index + offset < bytes.count ? UInt32(bytes[index + offset] & 0x3F) : 0
        }
        if lead < 0x80 { return lead }
        if lead < 0xE0 { return (lead & 0x1F) << 6 | continuation(1) }
        if lead < 0xF0 { return (lead & 0x0F) << 12 | continuation(1) << 6 | continuation(2) }
        return (lead & 0x07) << 18 | continuation(1) << 12 | continuation(2) << 6 | continuation(3)
    }
}
