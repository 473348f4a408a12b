import Testing

@testable import HearthBolt

/// All tokens of `source` up to the end.
private func tokens(_ source: String) throws -> [Token.Kind] {
    var lexer = Lexer(source)
    var kinds: [Token.Kind] = []
    while true {
        let token = try lexer.next()
        if token.kind == .end { return kinds }
        kinds.append(token.kind)
    }
}

@Suite struct BoltLexerTests {
    @Test func identifiersMayContainDollarAndUnderscore() throws {
        #expect(try tokens("$key _a b2 $") == [.identifier("$key"), .identifier("_a"), .identifier("b2"), .identifier("$")])
    }

    @Test func numbersAreDecimalHexOrExponent() throws {
        #expect(try tokens("12 1.5 .5 0x1F 2e3 1E-2") == [.number(12), .number(1.5), .number(0.5), .number(31), .number(2000), .number(0.01)])
    }

    @Test func stringsDecodeEscapes() throws {
        #expect(try tokens(#"'a\'b' "q\"" '\n\t\\' '\x41\u00e9' '\q'"#) == [
            .string("a'b"), .string("q\""), .string("\n\t\\"), .string("Aé"), .string("q"),
        ])
    }

    @Test func punctuationTakesTheLongestMatch() throws {
        #expect(try tokens("=== !== == != <= >= && || = ! < |") == [
            "===", "!==", "==", "!=", "<=", ">=", "&&", "||", "=", "!", "<", "|",
        ].map { .punctuation($0) })
    }

    @Test func commentsAndWhitespaceAreSkipped() throws {
        #expect(try tokens("a // line\n /* block\n */ b") == [.identifier("a"), .identifier("b")])
    }

    @Test func tokensKnowTheirLineAndColumn() throws {
        var lexer = Lexer("a\n  bc")
        _ = try lexer.next()
        let second = try lexer.next()
        #expect(second.location == SourceLocation(line: 2, column: 3))
    }

    @Test func unterminatedStringIsAnErrorAtItsStart() {
        var lexer = Lexer("x 'abc")
        _ = try? lexer.next()
        #expect(throws: BoltError(.parse, "Unterminated string", at: SourceLocation(line: 1, column: 3))) {
            try lexer.next()
        }
    }

    @Test func unterminatedCommentIsAnError() {
        var lexer = Lexer("/* never closed")
        #expect(throws: BoltError.self) { try lexer.next() }
    }

    @Test func regularExpressionKeepsItsBodyVerbatim() throws {
        var lexer = Lexer(#"/^\d+\/x$/i"#)
        #expect(try lexer.regularExpression() == .regularExpression(body: #"^\d+\/x$"#, flags: "i"))
    }
}

@Suite struct BoltPrinterTests {
    @Test func stringsAreSingleQuotedAndASCII() {
        #expect(RulesString.quoted("it's") == #"'it\'s'"#)
        #expect(RulesString.quoted("a\\b\r") == #"'a\\b\r'"#)
        #expect(RulesString.quoted("é\u{1}") == #"'\u00e9\u0001'"#)
        #expect(RulesString.quoted("😀") == #"'\ud83d\ude00'"#)
    }

    @Test func numbersPrintLikeJavaScript() {
        #expect(JavaScriptNumber.format(2) == "2")
        #expect(JavaScriptNumber.format(-3) == "-3")
        #expect(JavaScriptNumber.format(1.1) == "1.1")
        #expect(JavaScriptNumber.format(0.00001) == "0.00001")
        #expect(JavaScriptNumber.format(1e-7) == "1e-7")
        #expect(JavaScriptNumber.format(1e21) == "1e+21")
        #expect(JavaScriptNumber.format(1e20) == "100000000000000000000")
    }

    @Test func jsonTextIsIndentedByTwoAndEscapesControls() {
        let json = RulesJSON.object([
            ("rules", .object([(".read", .string("a\"b\n")), (".indexOn", .strings(["x"])), ("empty", .object([]))]))
        ])
        #expect(json.text == """
            {
              "rules": {
                ".read": "a\\"b\\n",
                ".indexOn": [
                  "x"
                ],
                "empty": {}
              }
            }

            """)
    }
}
