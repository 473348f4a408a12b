import Testing
@testable import HearthCore

/// Known answers from FIPS 180-4's examples and RFC 3174, plus base64 from RFC 4648 §10.
@Suite struct SHA1Tests {
    static func hex(_ digest: SHA1.Digest) -> String {
        digest.bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    static func sha1(_ text: String) -> String {
        var sha = SHA1()
        sha.update(text)
        return hex(sha.finalize())
    }

    @Test func emptyMessage() {
        #expect(Self.sha1("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    @Test func abc() {
        #expect(Self.sha1("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test func twoBlockMessage() {
        #expect(
            Self.sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test func millionAFedInUnevenPieces() {
        // Pieces of 1, 2, … bytes cross block boundaries at every offset.
        var sha = SHA1()
        var fed = 0
        var piece = 1
        while fed < 1_000_000 {
            let count = min(piece, 1_000_000 - fed)
            sha.update(String(repeating: "a", count: count))
            fed += count
            piece = piece % 130 + 1
        }
        #expect(Self.hex(sha.finalize()) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func millionAInOnePiece() {
        #expect(Self.sha1(String(repeating: "a", count: 1_000_000)) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func paddingBoundaries() {
        // 55, 56 and 64 bytes: the length field fits, just misses, and needs a whole extra block.
        #expect(Self.sha1(String(repeating: "a", count: 55)) == "c1c8bbdc22796e28c0e15163d20899b65621d65a")
        #expect(Self.sha1(String(repeating: "a", count: 56)) == "c2db330f6083854c99d4b5bfb6e8f29f201be699")
        #expect(Self.sha1(String(repeating: "a", count: 64)) == "0098ba824b5c16427bd7a1122a5a442a25ec644d")
    }

    @Test(arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func base64(input: String, expected: String) {
        #expect(Base64.encode(Array(input.utf8)) == expected)
    }

    @Test func base64UsesPlusAndSlash() {
        #expect(Base64.encode([0xFB, 0xFF, 0xBF]) == "+/+/")
    }
}
