import HearthProtocol
import Testing

@Test func plainStringsAreReadDirectlyAndOthersByTheParser() {
    #expect(JSONPlainScalar.plainString(Array(#""ada""#.utf8)) == "ada")
    #expect(JSONPlainScalar.plainString(Array(#""""#.utf8)) == "")
    #expect(JSONPlainScalar.plainString(Array(#""é/ü""#.utf8)) == "é/ü")
    // Escapes go to the parser, which decodes them.
    #expect(JSONPlainScalar.plainString(Array(#""a\u0062""#.utf8)) == nil)
    #expect(JSONPlainScalar.string(Array(#""a\u0062""#.utf8)) == "ab")
    #expect(JSONPlainScalar.string(Array(#""a\"b""#.utf8)) == "a\"b")
    // Not strings, or not valid ones.
    #expect(JSONPlainScalar.string(Array("12".utf8)) == nil)
    #expect(JSONPlainScalar.string(Array(#""a"#.utf8)) == nil)
    #expect(JSONPlainScalar.string([0x22, 0x61, 0x0A, 0x22]) == nil)  // raw newline inside
    #expect(JSONPlainScalar.string([0x22, 0xC3, 0x28, 0x22]) == nil)  // invalid UTF-8
}

@Test func plainIntegersAreDigitsOnly() {
    #expect(JSONPlainScalar.plainInteger(Array("0".utf8)) == 0)
    #expect(JSONPlainScalar.plainInteger(Array("1234".utf8)) == 1234)
    #expect(JSONPlainScalar.plainInteger(Array("012".utf8)) == nil)
    #expect(JSONPlainScalar.plainInteger(Array("-1".utf8)) == nil)
    #expect(JSONPlainScalar.plainInteger(Array("1.5".utf8)) == nil)
    #expect(JSONPlainScalar.plainInteger(Array("1e3".utf8)) == nil)
    #expect(JSONPlainScalar.plainInteger(Array(String(repeating: "9", count: 19).utf8)) == nil)
}
