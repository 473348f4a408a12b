import Testing
@testable import HearthCore

private func json(_ node: Node, _ format: JSONFormat = .rest) -> String { node.json(format) }
private func reformat(_ text: String, _ format: JSONFormat = .rest) throws -> String {
    try Node(json: text).json(format)
}

@Suite struct JSONWriterTests {
    @Test func scalarsAndEmpty() {
        #expect(json(.empty) == "null")
        #expect(json(Node(true)) == "true")
        #expect(json(Node(Int64(-42))) == "-42")
        #expect(json(Node(Int64.min)) == "-9223372036854775808")
        #expect(json(Node("a")) == #""a""#)
    }

    @Test(arguments: [
        (0.1, "0.1"), (1e21, "1e+21"), (1e-7, "1e-7"), (123456789.123, "123456789.123"),
        (.leastNonzeroMagnitude, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"), (-0.0, "0"),
        (1e20, "100000000000000000000"), (1.5e21, "1.5e+21"), (1e-6, "0.000001"), (1.5e-7, "1.5e-7"),
        (-2.5, "-2.5"), (0.000123, "0.000123"), (1152921504606846976, "1152921504606847000"),
        (9007199254740993.0, "9007199254740992"), (123e-20, "1.23e-18"), (-1e-7, "-1e-7"), (100, "100"),
    ] as [(Double, String)])
    func doublesAsJavaScriptWritesThem(value: Double, expected: String) {
        var out: [UInt8] = []
        JSONNumberFormatting.appendDouble(value, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == expected)
    }

    @Test func integerLiteralsStayExact() throws {
        #expect(try reformat("9007199254740993") == "9007199254740993")
        #expect(try reformat("[1.0, 1e2, -0, 2.50]") == "[1,100,0,2.5]")
    }

    @Test func stringsEscapedLikeJSONStringify() {
        let text = "q\"b\\s/\u{8}\u{C}\n\r\t\u{0}\u{1F}\u{7F}é😀\u{2028}"
        #expect(json(Node(text)) == #""q\"b\\s/\b\f\n\r\t\u0000\u001f"# + "\u{7F}é😀\u{2028}\"")
    }

    @Test func arrayRuleFromSpec() throws {
        // docs/protocol.md §5.4 examples.
        #expect(try reformat(#"{"0":"a","1":"b","3":"d"}"#) == #"["a","b",null,"d"]"#)
        #expect(try reformat(#"{"0":"a","5":"f"}"#) == #"{"0":"a","5":"f"}"#)
        #expect(try reformat(#"{"1":"b"}"#) == #"[null,"b"]"#)
        #expect(try reformat(#"{"2":"c"}"#) == #"{"2":"c"}"#)
        #expect(try reformat(#"{"0":"a","01":"b"}"#) == #"{"0":"a","01":"b"}"#)
        #expect(try reformat(#"{"0":"a","x":"b"}"#) == #"{"0":"a","x":"b"}"#)
        #expect(try reformat(#"{"-1":"a","0":"b"}"#) == #"{"-1":"a","0":"b"}"#)
        #expect(try reformat(#"[[1,2],{"0":true}]"#) == "[[1,2],[true]]")
        // Export never converts.
        #expect(try reformat(#"["a","b"]"#, .export) == #"{"0":"a","1":"b"}"#)
    }

    @Test func exportWritesPriorities() throws {
        let text = #"{"a":{".value":1,".priority":2},"b":{"c":true,".priority":"p"},"d":"x"}"#
        let node = try Node(json: text)
        #expect(json(node, .export) == text)
        #expect(json(node, .rest) == #"{"a":1,"b":{"c":true},"d":"x"}"#)
        #expect(json(Node("v").withPriority(.number(1.5)), .export) == #"{".value":"v",".priority":1.5}"#)
        // A prioritized index-keyed object stays an object so the priority has a place.
        let array = try Node(json: #"{"0":1,".priority":3}"#)
        #expect(json(array, JSONFormat(includePriorities: true, arrays: true)) == #"{"0":1,".priority":3}"#)
        #expect(json(array, .rest) == "[1]")
    }

    @Test func roundTrips() throws {
        let documents = [
            #"{"-5":1,"2":{"0":true,"1":false},"10":{"x":"y"},"a b":"\"q\"","é":0.5,"😀":-1e-7}"#,
            #"{"users":{"ada":{"born":1815,"name":"Ada",".priority":1},"alan":{".value":"AT",".priority":"z"}}}"#,
            #"{"n":{".sv":{"increment":1.5}},"t":{".sv":"timestamp"}}"#,
            #""just a string""#, "12345678901234", "1.5e+300",
        ]
        // Written in key order, as export output is, so text round-trips byte for byte.
        for document in documents {
            let node = try Node(json: document)
            let written = json(node, .export)
            #expect(written == document)
            #expect(try Node(json: written) == node)
        }
    }

    @Test func prettyFormat() throws {
        let node = try Node(json: #"{"b":[1,{"c":null,"d":"x"}],"a":{}, "e": 1}"#)
        #expect(json(node, .pretty()) == """
            {
              "b" : [
                1,
                {
                  "d" : "x"
                }
              ],
              "e" : 1
            }
            """)
        #expect(json(Node(1), .pretty()) == "1")
        #expect(json(Node("s").withPriority(.number(1)), .pretty(.export)) == """
            {
              ".value" : "s",
              ".priority" : 1
            }
            """)
    }

    @Test func appendJSONAppends() {
        var bytes = Array("prefix:".utf8)
        Node(["k": Node(1)]).appendJSON(to: &bytes, format: .rest)
        #expect(String(decoding: bytes, as: UTF8.self) == #"prefix:{"k":1}"#)
    }
}
