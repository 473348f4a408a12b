import Testing
@testable import HearthCore

struct ChildKeyTests {
    @Test("Keys follow Firebase order: integers numerically, then UTF-16 code units (spec §5.6)")
    func specExampleOrder() {
        let expected = ["-5", "1", "2", "10", "010", "2147483648", "A", "_", "a"]
        let sorted = expected.reversed().map { ChildKey($0) }.sorted().map(\.string)
        #expect(sorted == expected)
    }

    @Test func equalIntegerValuesPutTheShorterSpellingFirst() {
        #expect(ChildKey("7") < ChildKey("07"))
        #expect(!(ChildKey("07") < ChildKey("7")))
        #expect(ChildKey("-0") > ChildKey("0"))
    }

    @Test func integerKeysAreThirtyTwoBitOnly() {
        #expect(ChildKey("2147483647").integerValue == 2_147_483_647)
        #expect(ChildKey("-2147483648").integerValue == -2_147_483_648)
        #expect(ChildKey("2147483648").integerValue == nil)
        #expect(ChildKey("0000000000012").integerValue == 12)  // leading zeros are free
        #expect(ChildKey("12345678901").integerValue == nil)
        #expect(ChildKey("-").integerValue == nil)
        #expect(ChildKey("1a").integerValue == nil)
        #expect(ChildKey("+1").integerValue == nil)
        #expect(ChildKey("2147483648") > ChildKey("2147483647"))
        #expect(ChildKey("2147483648") < ChildKey("a"))
    }

    @Test("Characters above U+FFFF sort below U+E000–U+FFFF, as UTF-16 does")
    func astralBelowPrivateUse() {
        #expect(ChildKey("🐵") < ChildKey("\u{E000}"))
        #expect(ChildKey("\u{FFFD}") > ChildKey("😀"))
        #expect(ChildKey("a🐵") < ChildKey("a\u{FF01}"))
        #expect(ChildKey("é") < ChildKey("ê"))
        // Swift's own String order disagrees here, which is why Hearth does not use it.
        #expect("🐵" > "\u{E000}")
    }

    @Test func utf16OrderMatchesAReferenceOnRandomStrings() {
        var random = SeededGenerator(seed: 7)
        let alphabet: [Unicode.Scalar] = ["a", "b", "Z", "0", "é", "\u{E000}", "\u{FFEE}", "🐵", "😀", "\u{10FFFF}", "\u{7F}"]
        func randomString() -> String {
            var s = ""
            for _ in 0..<Int.random(in: 0...4, using: &random) { s.unicodeScalars.append(alphabet.randomElement(using: &random)!) }
            return s
        }
        for _ in 0..<5000 {
            let a = randomString(), b = randomString()
            let reference = Array(a.utf16).lexicographicallyPrecedes(Array(b.utf16))
            let ours = KeyOrder.compareUTF16(a, b) < 0
            #expect(ours == reference, "\(Array(a.unicodeScalars)) vs \(Array(b.unicodeScalars))")
        }
    }
}

struct ChildKeyTotalOrderTests {
    @Test("Keys equal in value and length ('-0', '00') still order consistently with ==")
    func sameIntegerValueAndLengthAreDistinctKeys() {
        #expect(ChildKey("-0") != ChildKey("00"))
        #expect(ChildKey.compare(ChildKey("-0"), ChildKey("00")) != 0)
        var map = ChildrenMap()
        map[ChildKey("-0")] = Node(1)
        map[ChildKey("00")] = Node(2)
        #expect(map.count == 2)
        #expect(map[ChildKey("-0")] == Node(1))
    }
}

struct ChildKeyOrderWordTests {
    @Test("The order word never contradicts the full comparison")
    func orderWordIsConsistentWithKeyOrder() {
        var random = SeededGenerator(seed: 99)
        let pieces = ["", "a", "b", "ab", "abcdefg", "abcdefgh", "abcdefgz", "0", "7", "07", "-1", "-0", "00",
                      "2147483647", "2147483648", "-2147483648", "é", "e\u{301}", "\u{E000}", "🐵", "z", "_", "\u{7F}", "\u{0}"]
        for _ in 0..<20_000 {
            let a = pieces.randomElement(using: &random)! + pieces.randomElement(using: &random)!
            let b = pieces.randomElement(using: &random)! + pieces.randomElement(using: &random)!
            let full = KeyOrder.compare(a, b)
            let wa = KeyOrder.orderWord(of: a), wb = KeyOrder.orderWord(of: b)
            if wa != wb { #expect((wa < wb) == (full < 0), "\(a.debugDescription) vs \(b.debugDescription)") }
            #expect(ChildKey.compare(ChildKey(a), ChildKey(b)) == full)
            #expect((ChildKey(a) == ChildKey(b)) == a.utf8.elementsEqual(b.utf8))
        }
    }
}
