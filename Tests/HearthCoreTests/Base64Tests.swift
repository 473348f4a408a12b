import HearthSupport
import Testing

@testable import HearthCore

@Test("Both alphabets, with and without padding, decode alike", arguments: [
    ("YWJj", "abc"), ("YWI=", "ab"), ("YWI", "ab"), ("YWI.", "ab"), ("YQ==", "a"), ("YQ", "a"), ("YQ..", "a"), ("", ""),
    ("-_8=", "\u{FB}\u{FF}"), ("+/8=", "\u{FB}\u{FF}"),
])
func base64Decodes(text: String, expected: String) throws {
    let decoded = try #require(Base64.decode(Array(text.utf8)))
    // Bytes compared as Latin-1 code points so that the two-byte cases above can be written as text.
    #expect(decoded == expected.unicodeScalars.map { UInt8($0.value) })
}

@Test("What no encoder writes is refused", arguments: ["Y", "YWJjZ", "YW!j", "YQ===", "YWJj\n", "Y Q="])
func base64RefusesMalformedText(text: String) {
    #expect(Base64.decode(Array(text.utf8)) == nil)
}

@Test func base64RoundTripsEveryByte() {
    var generator = SplitMix64(seed: 7)
    for count in 0..<70 {
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(Base64.decode(Array(Base64.encode(bytes).utf8)) == bytes)
    }
}
