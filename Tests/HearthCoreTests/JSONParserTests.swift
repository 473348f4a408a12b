import Testing
@testable import HearthCore

private func parse(_ json: String, at path: Path? = nil) throws(DataError) -> Node {
    try Node(json: json, options: .init(validation: path.map { .write(at: $0) } ?? .none))
}

private func parseError(_ json: String, at path: Path? = nil) -> DataError? {
    do {
        _ = try parse(json, at: path)
        return nil
    } catch {
        return error
    }
}

@Suite struct JSONParserTests {
    @Test func scalarsAtTopLevel() throws {
        #expect(try parse("null") == .empty)
        #expect(try parse(" true ") == Node(true))
        #expect(try parse("false") == Node(false))
        #expect(try parse("\"hi\"") == Node("hi"))
        #expect(try parse("-12") == Node(Int64(-12)))
        #expect(try parse("1.5") == Node(1.5))
    }

    @Test func objectsSortInFirebaseKeyOrder() throws {
        let node = try parse(#"{"b": 1, "10": 2, "a": 3, "2": 4, "-5": 5}"#)
        #expect(node.children.keys.map(\.string) == ["-5", "2", "10", "a", "b"])
        #expect(node.child("10") == Node(2))
    }

    /// The parser sorts by a one-word summary of each key and falls back to the strings on ties;
    /// check it against `ChildrenMap` insertion on keys that tie or sit on the summary's edges:
    /// integer spellings, shared 7-byte prefixes, non-ASCII (U+E000 against surrogate pairs),
    /// NUL, duplicates and nulls.
    @Test func keyOrderMatchesMapInsertionOnTrickyKeys() throws {
        let keys = [
            "0", "00", "-0", "7", "07", "-7", "10", "2147483647", "2147483648", "-2147483648", "-2147483649",
            "12345678901", "a", "ab", "abcdefg", "abcdefgh", "abcdefgi", "abcdef\\u00e9", "abcdef\\u00e0",
            "abcdef~", "\\u00e9", "\\ue000", "\\ud83d\\ude00", "\\u0000", "a\\u0000", "A", "-", "-a", "1a",
            ".sv_", "zzzzzzzzzzzzzzzzzzzzzz", "zzzzzzzzzzzzzzzzzzzzzy", "\\u00e9\\u00e9", "é", "\\uffff",
        ]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
        for _ in 0..<300 {
            var expected = ChildrenMap()
            var members: [String] = []
            for _ in 0..<(1 + next(45)) {
                let key = keys[next(keys.count)]
                let decoded = try parse("\"\(key)\"").stringValue!
                if next(8) == 0 {
                    members.append("\"\(key)\":null")
                    expected.removeValue(for: ChildKey(decoded))
                } else {
                    let value = next(1000)
                    members.append("\"\(key)\":\(value)")
                    expected[ChildKey(decoded)] = Node(value)
                }
            }
            let node = try parse("{" + members.joined(separator: ",") + "}")
            #expect(node.children.keys == expected.keys, "\(members)")
            #expect(node == Node(children: expected))
        }
    }

    @Test func duplicateKeysLastOneWins() throws {
        let node = try parse(#"{"a": 1, "b": 2, "a": 3}"#)
        #expect(node.childCount == 2)
        #expect(node.child("a") == Node(3))
        #expect(try parse(#"{"a": 1, "a": null}"#) == .empty)
    }

    @Test func nullsAndEmptyObjectsAreDropped() throws {
        #expect(try parse(#"{"a": null, "b": {}, "c": {"d": null}, "e": []}"#) == .empty)
        #expect(try parse("{}") == .empty)
        #expect(try parse(#"{"a": {"b": null}, "c": 1}"#).children.keys == ["c"])
    }

    @Test func arraysBecomeIndexKeyedChildrenWithoutNulls() throws {
        let node = try parse(#"["a", null, "c", []]"#)
        #expect(node.children.keys.map(\.string) == ["0", "2"])
        #expect(node.child("2") == Node("c"))
        // 12 elements: "10" and "11" must sort after "9" (integer keys).
        let long = try parse("[0,1,2,3,4,5,6,7,8,9,10,11]")
        #expect(long.children.keys.map(\.string) == (0...11).map(String.init))
    }

    @Test func priorities() throws {
        let node = try parse(#"{"a": 1, ".priority": 5}"#)
        #expect(node.priority == .number(5))
        #expect(node.child("a") == Node(1))
        #expect(try parse(#"{".priority": "p", "a": 1}"#).priority == .string("p"))
        #expect(try parse(#"{"a": 1, ".priority": null}"#).priority == nil)
        // An object without children is empty and has no priority.
        #expect(try parse(#"{".priority": 1}"#) == .empty)
        let leaf = try parse(#"{".value": "v", ".priority": 2.5}"#)
        #expect(leaf.stringValue == "v")
        #expect(leaf.priority == .number(2.5))
        #expect(try parse(#"{".priority": 1, ".value": null}"#) == .empty)
        #expect(try parse(#"{".value": {"x": true}}"#) == Node(["x": Node(true)]))
    }

    @Test func invalidPriorities() {
        for json in [#"{"a":1,".priority":true}"#, #"{"a":1,".priority":{"b":1}}"#, #"{"a":1,".priority":[1]}"#] {
            #expect(parseError(json)?.code == .invalidPriority, "\(json)")
        }
    }

    @Test func valueMixedWithOtherKeysIsInvalid() {
        let error = parseError(#"{"x": {".value": 1, "b": 2}}"#, at: "root")
        #expect(error?.code == .invalidData)
        #expect(error?.message.contains("/root/x") == true)
        #expect(parseError(#"{"b": 2, ".value": 1}"#)?.code == .invalidData)
    }

    @Test func serverValuePlaceholdersAreKept() throws {
        let node = try parse(#"{"t": {".sv": "timestamp"}, "n": {".sv": {"increment": 2}}}"#, at: "a")
        #expect(node.child("t").child(".sv") == Node("timestamp"))
        #expect(node.child("t").isServerValuePlaceholder)
        #expect(node.child("n").child(".sv").child("increment") == Node(2))
        let prioritized = try parse(#"{"a": 1, ".priority": {".sv": "timestamp"}}"#, at: "x")
        #expect(prioritized.priority == nil)
        #expect(prioritized.child(.priorityKey).isServerValuePlaceholder)
        #expect(parseError(#"{".sv": "timestamp", "a": 1}"#, at: "x")?.code == .invalidServerValue)
    }

    @Test func numbers() throws {
        #expect(try parse("9007199254740993") == Node(Int64(9_007_199_254_740_993)))  // 2^53+1 stays exact
        #expect(try parse("-9223372036854775808") == Node(Int64.min))
        #expect(try parse("9223372036854775807") == Node(Int64.max))
        #expect(try parse("9223372036854775808").numberValue == 9_223_372_036_854_775_808.0)
        #expect(try parse("1.0") == Node(Int64(1)))
        #expect(try parse("1e2") == Node(Int64(100)))
        #expect(try parse("-0") == Node(Int64(0)))
        #expect(try parse("-0.0") == Node(Int64(0)))
        #expect(try parse("0.1").numberValue == 0.1)
        #expect(try parse("1e-400") == Node(Int64(0)))
        #expect(try parse("1.7976931348623157e308").numberValue == .greatestFiniteMagnitude)
        #expect(try parse("5e-324").numberValue == .leastNonzeroMagnitude)
    }

    /// The parser's inline order word (one load, padding masked off) must be `KeyOrder`'s.
    @Test func inlineKeyOrderWordsMatchKeyOrder() {
        var random = SeededGenerator(seed: 7)
        let alphabet = Array("-0123456789az_.AZ\u{0}\u{7F}é🔥".utf8)
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...12, using: &random)
            var bytes = (0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }
            bytes += (0..<8).map { _ in UInt8.random(in: 0...255, using: &random) }  // readable tail
            bytes.withUnsafeBufferPointer { all in
                let key = UnsafeBufferPointer(rebasing: all[0..<count])
                #expect(JSONParser.order(ofKey: key, canLoadWord: true) == KeyOrder.orderWord(ofUTF8: key), "\(Array(key))")
            }
        }
    }

    /// Short decimals skip `strtod` (`JSONDecimal`); they must round exactly as `Double(String)`.
    @Test func shortDecimalsRoundLikeTheStandardLibrary() throws {
        var random = SeededGenerator(seed: 53)
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...19, using: &random)
            var text = Int.random(in: 0...1, using: &random) == 0 ? "" : "-"
            let integerDigits = Int.random(in: 1...digits, using: &random)
            for position in 0..<digits {
                if position == integerDigits { text += "." }
                let digit = position == 0 && integerDigits > 1 ? Int.random(in: 1...9, using: &random) : Int.random(in: 0...9, using: &random)
                text += String(digit)
            }
            // Without a fraction an exponent is needed, or the literal would be an exact integer.
            if integerDigits == digits || Int.random(in: 0...2, using: &random) == 0 {
                text += ["e", "E", "e+", "e-"][Int.random(in: 0...3, using: &random)] + String(Int.random(in: 0...30, using: &random))
            }
            let expected = try #require(Double(text))
            #expect(try parse(text) == Node(expected), "\(text)")
            #expect(try parse(text).numberValue == expected, "\(text)")
        }
        #expect(try parse("9007199254740993.0").numberValue == 9_007_199_254_740_992)  // above 2^53: strtod
        #expect(try parse("0.30000000000000004").numberValue == 0.30000000000000004)
        #expect(try parse("123456789012345678.5e-3").numberValue == 123_456_789_012_345.6785)
        #expect(try parse("1e22").numberValue == 1e22)
        #expect(try parse("1e23").numberValue == 1e23)
        #expect(try parse("4.7e-22").numberValue == 4.7e-22)
        #expect(try parse("0e99999") == Node(Int64(0)))
    }

    @Test(arguments: [
        ("1e400", 0), ("[-1e400]", 1), ("01", 1), ("-01", 2), ("1.", 2), (".5", 0), ("1e", 2), ("+1", 0),
        ("-", 1), ("[1,]", 3), ("{\"a\":1,}", 7), ("{\"a\" 1}", 5), ("[1 2]", 3), ("tru", 3), ("nul", 3),
        ("\"abc", 4), ("\"a\\x\"", 3), ("\"\\uD800\"", 1), ("\"\\uDC00\"", 1), ("\"\\uD800\\u0041\"", 1),
        ("\"a\u{1}\"", 2), ("{} x", 3), ("", 0), ("   ", 3), ("\u{FEFF}1", 0), ("[1]\u{C}", 3), ("NaN", 0),
        ("{1:2}", 1), ("\"\\u12\"", 5),
    ])
    func syntaxErrorsReportTheByteOffset(json: String, offset: Int) {
        let error = parseError(json)
        #expect(error?.code == .invalidJSON)
        #expect(error?.byteOffset == offset, "\(json): \(error?.message ?? "no error")")
        #expect(error?.message.hasPrefix("Invalid JSON at byte \(offset): ") == true)
    }

    @Test func invalidUTF8IsRejectedWithItsPosition() {
        for (bytes, offset) in [([0x22, 0x61, 0xFF, 0x22], 2), ([0x22, 0xC0, 0xAF, 0x22], 1), ([0x22, 0xED, 0xA0, 0x80, 0x22], 2),
                                ([0x22, 0x5C, 0x6E, 0xE2, 0x82, 0x22], 5)] as [([UInt8], Int)] {
            do {
                _ = try Node(jsonBytes: bytes)
                Issue.record("accepted \(bytes)")
            } catch {
                #expect(error.code == .invalidJSON)
                #expect(error.byteOffset == offset, "\(bytes)")
            }
        }
    }

    @Test func escapes() throws {
        #expect(try parse(#""a\"b\\c\/d\b\f\n\r\t""#) == Node("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        #expect(try parse(#""\u00e9\u0000\uD83D\uDE00 x""#) == Node("é\u{0}😀 x"))
        #expect(try parse(#"{"\u0061": 1}"#).child("a") == Node(1))
    }

    @Test func nfcAndNFDKeysStayDistinct() throws {
        let node = try parse("{\"\u{E9}\": \"NFC\", \"e\u{301}\": \"NFD\"}")
        #expect(node.childCount == 2)
        #expect(node.child(ChildKey("\u{E9}")) == Node("NFC"))
        #expect(node.child(ChildKey("e\u{301}")) == Node("NFD"))
    }

    @Test func nestingLimitIsAnErrorNotACrash() throws {
        let depth = Limits.jsonNestingDepthMax
        _ = try parse(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        let error = parseError(String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1))
        #expect(error?.code == .invalidJSON)
        #expect(error?.byteOffset == depth)
        #expect(parseError(String(repeating: "{\"a\":", count: 100_000))?.code == .invalidJSON)
    }

    @Test func longKeysAreShared() throws {
        let uid = "abcdefghijklmnopqrstuvwxyz01"
        let node = try parse(#"{"j1": {"\#(uid)": true}, "j2": {"\#(uid)": true}}"#)
        var a = node.child("j1").children.first!.key.string
        var b = node.child("j2").children.first!.key.string
        let same = a.withUTF8 { pa in b.withUTF8 { pb in pa.baseAddress == pb.baseAddress } }
        #expect(same)
    }

    @Test func writeValidationNamesTheKey() {
        let cases: [(String, DataError.Code, String)] = [
            (#"{"a": {"b.c": 1}}"#, .invalidKey, "b.c"),
            (#"{"a$": 1}"#, .invalidKey, "a$"),
            (#"{"": 1}"#, .invalidKey, "''"),
            (#"{"a": {".info": 1}}"#, .invalidKey, ".info"),
            (#"{"x\u0007": 1}"#, .invalidKey, "U+0007"),
            (#"{"a": {"b/c": 1}}"#, .invalidKey, "/base/a/b/c"),
        ]
        for (json, code, fragment) in cases {
            let error = parseError(json, at: "base")
            #expect(error?.code == code, "\(json)")
            #expect(error?.message.contains(fragment) == true, "\(json): \(error?.message ?? "no error")")
        }
        // Same documents are fine without validation.
        #expect(parseError(#"{"a": {"b.c": 1}, "": 2}"#) == nil)
    }

    @Test func writeValidationLimits() throws {
        // Depth counts from the base path: 30 keys deep at "a/b" is 32 in all.
        let nested = { (n: Int) in String(repeating: "{\"k\":", count: n) + "1" + String(repeating: "}", count: n) }
        #expect(parseError(nested(30), at: "a/b") == nil)
        #expect(parseError(nested(31), at: "a/b")?.code == .pathTooDeep)
        #expect(parseError("[[[1]]]", at: Path((0..<30).map { ChildKey("k\($0)") }))?.code == .pathTooDeep)
        let longKey = String(repeating: "x", count: 700)
        #expect(parseError(#"{"\#(longKey)": {"\#(String(repeating: "y", count: 70))": 1}}"#, at: "base")?.code == .pathTooLong)
        #expect(parseError(#"{"\#(String(repeating: "x", count: 769))": 1}"#, at: "")?.code == .invalidKey)
        let big = "\"" + String(repeating: "s", count: Limits.stringLengthBytesMax + 1) + "\""
        #expect(parseError(big, at: "a")?.code == .stringTooLong)
        #expect(parseError(big) == nil)
    }

    @Test func bytesAndStringEntryPointsAgree() throws {
        let json = #"{"a": [1, 2.5, "x"], "b": {".value": true, ".priority": "p"}}"#
        let fromString = try Node(json: json)
        #expect(try Node(jsonBytes: Array(json.utf8)) == fromString)
        let fromRaw = try Array(json.utf8).withUnsafeBytes { raw throws(DataError) in try Node(jsonBytes: raw) }
        #expect(fromRaw == fromString)
    }
}

struct JSONParserIntegerKeyTests {
    @Test("Integer keys with leading zeros beyond 11 characters still sort as integers")
    func longZeroPaddedIntegerKeysSortNumerically() throws {
        let node = try Node(json: #"{"b":1,"-02147483648":2,"700":3,"0000000000005":4}"#)
        #expect(node.children.keys.map(\.string) == ["-02147483648", "0000000000005", "700", "b"])
    }
}
