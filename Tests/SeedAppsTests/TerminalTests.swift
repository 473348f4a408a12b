import Testing

@testable import SeedTerminal

@Suite struct KeyDecoderTests {
    @Test func textControlKeysAndEscapeSequences() {
        var decoder = KeyDecoder()
        func keys(_ bytes: [UInt8]) -> [Key] { decoder.decode(bytes) }
        func keys(_ text: String) -> [Key] { decoder.decode(Array(text.utf8)) }
        #expect(keys("hé!") == [.character("h"), .character("é"), .character("!")])
        #expect(keys([0x0D, 0x7F, 0x09, 0x03, 0x14]) == [.enter, .backspace, .tab, .ctrl("c"), .ctrl("t")])
        #expect(keys("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D\u{1B}OH\u{1B}[F\u{1B}[Z") == [.up, .down, .right, .left, .home, .end, .backTab])
        #expect(keys("\u{1B}[3~\u{1B}[5~\u{1B}[6~\u{1B}[1~\u{1B}[4~") == [.delete, .pageUp, .pageDown, .home, .end])
        // A lone ESC at the end of a read is the Esc key; unknown sequences are skipped.
        #expect(keys([0x1B]) == [.escape])
        #expect(keys("\u{1B}[15~x") == [.character("x")])
    }

    @Test func sequencesAndCharactersSplitAcrossReadsAreJoined() {
        var decoder = KeyDecoder()
        func keys(_ bytes: [UInt8]) -> [Key] { decoder.decode(bytes) }
        let bytes = Array("a\u{1B}[Aé😀".utf8)
        #expect(keys(Array(bytes[0..<3])) == [.character("a")])  // "a", ESC, "[": the sequence has begun
        #expect(keys(Array(bytes[3..<5])) == [.up])  // "A" and half of "é"
        #expect(keys(Array(bytes[5..<7])) == [.character("é")])  // its end and the first byte of the emoji
        #expect(keys(Array(bytes[7...])) == [.character("😀")])
    }
}

@Suite struct TextFieldTests {
    @Test func editingKeys() {
        var field = TextField("helo")
        field.handle(.left)
        field.handle(.character("l"))
        #expect(field.text == "hello" && field.cursor == 4)
        field.handle(.home)
        field.handle(.delete)
        #expect(field.text == "ello" && field.cursor == 0)
        field.handle(.end)
        field.handle(.backspace)
        #expect(field.text == "ell")
        field.handle(.ctrl("u"))
        #expect(field.text.isEmpty)
        let used = field.handle(.enter)
        #expect(!used)
    }

    @Test func limitsAndSecureFields() {
        var field = TextField(limit: 3)
        for character in "abcdef" { field.handle(.character(character)) }
        #expect(field.text == "abc")
        let secret = TextField("pw", secure: true)
        #expect(secret.shown == "••")
    }
}

@Suite struct RenderingTests {
    @Test func wrapsAtSpacesAndCutsLongWords() {
        #expect(wrap("the quick brown fox", width: 9) == ["the quick", "brown fox"])
        #expect(wrap("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
        #expect(wrap("a\nb", width: 5) == ["a", "b"])
    }

    @Test func screensAreCutToTheWindowAndCleared() {
        let lines = [Line("hello world"), Line([Span("ab", .bold), Span("cdef")]), Line("not shown")]
        let out = ScreenRenderer.render(lines, width: 5, height: 2, cursor: (row: 1, column: 2))
        #expect(out.contains("hello\u{1B}[K") && !out.contains("world") && !out.contains("not shown"))
        #expect(out.contains("\u{1B}[1mab\u{1B}[0mcde\u{1B}[K"))
        #expect(out.hasSuffix("\u{1B}[2;3H\u{1B}[?25h"))
        // Text cannot smuggle escape sequences or line breaks onto the screen.
        let hostile = ScreenRenderer.render([Line("a\u{1B}[2Jb\nc")], width: 20, height: 1, cursor: nil)
        #expect(!hostile.contains("\u{1B}[2J") && hostile.contains("a[2Jbc"))
    }
}
