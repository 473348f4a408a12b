/// SHA-1 (FIPS 180-4 §6.1), fed incrementally so a large preimage never has to exist in memory.
///
/// HearthCore carries no C and no Foundation, so the node hash (docs/protocol.md §4.1) needs its
/// own SHA-1. It is used for content fingerprints the protocol defines, never for security.
///
///     var sha = SHA1()
///     sha.update("abc")
///     sha.finalize().bytes   // a9 99 3e 36 …
package struct SHA1: Sendable {
    /// A 20-byte SHA-1 digest, kept as the five big-endian state words so passing it costs nothing.
    package struct Digest: Sendable, Hashable {
        package var words: (UInt32, UInt32, UInt32, UInt32, UInt32)

        /// The digest as 20 bytes, most significant byte of the first word first.
        package var bytes: [UInt8] {
            var result: [UInt8] = []
            result.reserveCapacity(20)
            withUnsafeBytes { result.append(contentsOf: $0) }
            return result
        }

        /// Calls `body` with the 20 digest bytes, without allocating.
        package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            var bigEndian = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian, words.4.bigEndian)
            return try Swift.withUnsafeBytes(of: &bigEndian) { try body(UnsafeRawBufferPointer(rebasing: $0[..<20])) }
        }

        package static func == (lhs: Digest, rhs: Digest) -> Bool {
            lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
                && lhs.words.3 == rhs.words.3 && lhs.words.4 == rhs.words.4
        }

        package func hash(into hasher: inout Hasher) {
            withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
    /// The partial block not yet compressed; a tuple rather than an array so hashing a node tree
    /// (one SHA-1 per node) does no heap allocation.
    private var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var blockCount = 0
    /// Total bytes fed so far.
    package private(set) var byteCount: UInt64 = 0

    package init() {}

    /// Feeds raw bytes.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        byteCount &+= UInt64(bytes.count)
        var input = bytes[...]
        if blockCount > 0 {
            let take = min(64 - blockCount, input.count)
            let offset = blockCount
            withUnsafeMutableBytes(of: &block) { buffer in
                buffer.baseAddress!.advanced(by: offset)
                    .copyMemory(from: UnsafeRawPointer(bytes.baseAddress!) + input.startIndex, byteCount: take)
            }
            blockCount += take
            input = input.dropFirst(take)
            guard blockCount == 64 else { return }
            var full = block
            withUnsafeBytes(of: &full) { compress($0) }
            blockCount = 0
        }
        while input.count >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: input.prefix(64)))
            input = input.dropFirst(64)
        }
        if !input.isEmpty {
            let count = input.count
            withUnsafeMutableBytes(of: &block) { buffer in
                buffer.baseAddress!.copyMemory(from: UnsafeRawPointer(bytes.baseAddress!) + input.startIndex, byteCount: count)
            }
            blockCount = count
        }
    }

    /// Feeds a string's UTF-8 encoding.
    package mutating func update(_ string: String) {
        var string = string
        string.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Feeds a single byte.
    package mutating func update(byte: UInt8) {
        var byte = byte
        withUnsafeBytes(of: &byte) { update($0) }
    }

    /// Pads the message (a 1 bit, zeros, then the 64-bit bit length) and returns the digest.
    package consuming func finalize() -> Digest {
        let bitLength = byteCount &* 8
        update(byte: 0x80)
        var zero: UInt8 = 0
        while blockCount != 56 { withUnsafeBytes(of: &zero) { update($0) } }
        var lengthBigEndian = bitLength.bigEndian
        withUnsafeBytes(of: &lengthBigEndian) { update($0) }
        return Digest(words: state)
    }

    /// Compresses one 64-byte block into the state.
    private mutating func compress(_ chunk: UnsafeRawBufferPointer) {
        var w = (
            UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0),
            UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0)
        )
        var (a, b, c, d, e) = state
        // The message schedule is kept as a rolling window of 16 words (FIPS 180-4 §6.1.3 allows
        // this), so the 80-word expansion needs no array.
        withUnsafeMutableBytes(of: &w) { raw in
            let words = raw.bindMemory(to: UInt32.self)
            for i in 0..<16 {
                words[i] = UInt32(bigEndian: chunk.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
            }
            for t in 0..<80 {
                let word: UInt32
                if t < 16 {
                    word = words[t]
                } else {
                    let mixed = words[(t - 3) & 15] ^ words[(t - 8) & 15] ^ words[(t - 14) & 15] ^ words[t & 15]
                    word = mixed.rotatedLeft(1)
                    words[t & 15] = word
                }
                let f: UInt32, k: UInt32
                switch t {
                case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
                case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
                case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
                default: f = b ^ c ^ d; k = 0xCA62_C1D6
                }
                let temp = a.rotatedLeft(5) &+ f &+ e &+ k &+ word
                e = d
                d = c
                c = b.rotatedLeft(30)
                b = a
                a = temp
            }
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
    }
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedLeft(_ count: UInt32) -> UInt32 { (self << count) | (self >> (32 - count)) }
}
