@testable import HearthCore
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

/// Documents read by the plain fast path must come out exactly as the parser reads them.
@Test func plainDocumentsMatchTheParser() throws {
    let documents = [
        #""ada""#, #"  "x y"  "#, #""""#, #""é""#, "0", "7", "123456789012345678", "true", "false", " true\n",
        // Not plain: the parser's answer (or error) stands.
        "null", "-1", "1.5", "1e2", "01", #""a\nb""#, "tru", #""open"#, "1234567890123456789", "{}", "[1]",
    ]
    for document in documents {
        let bytes = Array(document.utf8)
        let viaParser: Result<Node, DataError> = bytes.withUnsafeBytes { raw in
            var parser = JSONParser(bytes: raw, options: .init())
            return Result { () throws(DataError) -> Node in try parser.parseDocument() }
        }
        let viaNode = Result { () throws(DataError) -> Node in try Node(jsonBytes: bytes) }
        switch (viaParser, viaNode) {
        case (.success(let a), .success(let b)): #expect(a == b, "\(document)")
        case (.failure(let a), .failure(let b)): #expect(a.message == b.message, "\(document)")
        default: Issue.record("\(document): parser \(viaParser), Node \(viaNode)")
        }
    }
    // A written scalar still has its path checked.
    #expect(throws: DataError.self) { try Node(jsonBytes: Array(#""x""#.utf8), options: .init(validation: .write(at: Path("a.b")))) }
}
