import Testing
@testable import HearthRules

struct LexerTests {
    func kinds(_ text: String) throws -> [Token.Kind] {
        try Lexer.tokenize(Array(text.unicodeScalars)).map(\.kind)
    }

    @Test func operatorsLongestFirst() throws {
        #expect(try kinds("a === b !== c == d != e <= f >= g && h || i") == [
            .identifier("a"), .symbol("==="), .identifier("b"), .symbol("!=="), .identifier("c"), .symbol("=="),
            .identifier("d"), .symbol("!="), .identifier("e"), .symbol("<="), .identifier("f"), .symbol(">="),
            .identifier("g"), .symbol("&&"), .identifier("h"), .symbol("||"), .identifier("i"), .end,
        ])
    }

    @Test func numbers() throws {
        #expect(try kinds("1 2.5 .5 1e3 1.5E-2 0x1F") == [.number(1), .number(2.5), .number(0.5), .number(1000), .number(0.015), .number(31), .end])
    }

    @Test func stringsWithEscapes() throws {
        #expect(try kinds(#"'it\'s' "a\"b" 'tab\there' '\u0041\x42'"#) == [
            .string("it's"), .string("a\"b"), .string("tab\there"), .string("AB"), .end,
        ])
    }

    @Test func dollarIdentifiers() throws {
        #expect(try kinds("$uid == auth.uid") == [.identifier("$uid"), .symbol("=="), .identifier("auth"), .symbol("."), .identifier("uid"), .end])
    }

    @Test func slashIsRegexWhereAnOperandIsExpected() throws {
        #expect(try kinds("a.matches(/^[a/z]+$/i)") == [
            .identifier("a"), .symbol("."), .identifier("matches"), .symbol("("), .regex(pattern: "^[a/z]+$", flags: "i"), .symbol(")"), .end,
        ])
        #expect(try kinds("(1) / 2") == [.symbol("("), .number(1), .symbol(")"), .symbol("/"), .number(2), .end])
        #expect(try kinds("x / y") == [.identifier("x"), .symbol("/"), .identifier("y"), .end])
    }

    @Test func offsetsPointAtTokens() throws {
        let tokens = try Lexer.tokenize(Array("ab  == 'x'".unicodeScalars))
        #expect(tokens.map(\.start) == [0, 4, 7, 10])
        #expect(tokens.map(\.end) == [2, 6, 10, 10])
    }

    @Test(arguments: ["a = b", "a & b", "a | b", "2 ** 2", "a; b", "a # b", "'open"])
    func rejectsWhatIsNotAnOperator(_ text: String) {
        #expect(throws: ExpressionError.self) { try kinds(text) }
    }
}
