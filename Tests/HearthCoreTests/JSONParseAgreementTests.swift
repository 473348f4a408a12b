import Testing
@testable import HearthCore

/// A parse that validates a write and one that does not must give the same tree for a document
/// both accept, and report the same byte for one both reject. Every case is parsed both ways; the
/// documents repeat long keys and values (shared through `JSONKeyInterner`, lent until the parse
/// settles), with duplicates, nulls and priorities that the parser drops on the way: a string
/// released too early shows up as a corrupted key or value in one of the trees, or as a crash.
@Suite struct JSONParseAgreementTests {
    private let validating = JSONParseOptions(validation: .write(at: Path("w")))

    /// Parses `json` without and with validation, expects the same tree (priorities and leaf
    /// types included, through the export formats), and returns it.
    @discardableResult
    private func parseBothWays(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Node {
        let plain = try Node(json: json)
        let validated = try Node(json: json, options: validating)
        #expect(plain == validated, "\(json.prefix(200))", sourceLocation: sourceLocation)
        #expect(plain.json(.lossless) == validated.json(.lossless), sourceLocation: sourceLocation)
        #expect(plain.json(.export) == validated.json(.export), sourceLocation: sourceLocation)
        return plain
    }

    private func uid(_ n: Int) -> String {
        let digits = String(n)
        return "Zq" + String(repeating: "x", count: 26 - digits.count) + digits
    }

    /// uid-keyed maps of many sizes, keys out of order, each uid also a value.
    @Test func uidMapsGetEveryKey() throws {
        for count in [1, 2, 31, 32, 33, 64, 65, 200] {
            let members = (0..<count).reversed().map { "\"\(uid($0))\":\"\(uid(count - $0))\"" }
            let node = try parseBothWays("{\"m\":{" + members.joined(separator: ",") + "}}")
            let map = node.child("m")
            #expect(map.childCount == count)
            for n in 0..<count {
                #expect(map.child(ChildKey(uid(n))) == Node(uid(count - n)), "count \(count), key \(n)")
            }
            // In key order.
            let keys = map.children.keys.map(\.string)
            #expect(keys == keys.sorted { ChildKey($0) < ChildKey($1) })
        }
    }

    /// The last of duplicate long keys wins, with its value.
    @Test func duplicateLongKeysKeepTheLastValue() throws {
        var members: [String] = []
        for n in 0..<40 { members.append("\"\(uid(n % 7))\":\"\(uid(100 + n))\"") }
        let node = try parseBothWays("{" + members.joined(separator: ",") + "}")
        #expect(node.childCount == 7)
        for k in 0..<7 {
            let last = (0..<40).last { $0 % 7 == k }!
            #expect(node.child(ChildKey(uid(k))) == Node(uid(100 + last)))
        }
        // A later null removes a key, and a later value replaces a shared string.
        let replaced = try parseBothWays(#"{"\#(uid(1))":"\#(uid(2))","\#(uid(1))":null,"\#(uid(3))":"\#(uid(4))","\#(uid(3))":5}"#)
        #expect(replaced == Node([uid(3): Node(5)]))
    }

    /// Shared strings in nested objects, arrays and the object around them.
    @Test func nestedObjectsKeepTheirOwnStrings() throws {
        let inner = (0..<40).map { "\"\(uid($0))\":{\"\(uid($0 + 1))\":\"\(uid($0 + 2))\",\"n\":[\"\(uid($0 + 3))\",{\"\(uid($0 + 4))\":true}]}" }
        let node = try parseBothWays("{\"\(uid(999))\":{" + inner.joined(separator: ",") + "},\"\(uid(998))\":\"\(uid(997))\"}")
        #expect(node.child(ChildKey(uid(998))) == Node(uid(997)))
        for n in 0..<40 {
            let child = node.child(ChildKey(uid(999))).child(ChildKey(uid(n)))
            #expect(child.child(ChildKey(uid(n + 1))) == Node(uid(n + 2)))
            #expect(child.child(at: Path("n/0")) == Node(uid(n + 3)))
            #expect(child.child(at: Path("n/1")).child(ChildKey(uid(n + 4))) == Node(true))
        }
    }

    /// Strings that are not interned (escaped, push IDs, short, longer than values are interned)
    /// next to ones that are, ASCII or not; `.priority` and `.value` with long strings.
    @Test func internedAndOtherStringsMix() throws {
        let json = #"""
        {"\#(uid(1))":"caf\u00e9 \#(uid(2))","caf\#u{E9}-\#(uid(3))":"\#(uid(4))",
         "-NqK3x0aB1cD2eF3gH4i":"\#(uid(5))","short":"\#(uid(6))","\#(uid(7))":"\#(String(repeating: "y", count: 60))",
         "esc\u0061ped-\#(uid(8))":"\#(uid(9))","p":{".priority":"\#(uid(10))","\#(uid(11))":"\#(uid(12))"},
         "v":{".value":"\#(uid(13))",".priority":"\#(uid(14))"},"a":["\#(uid(15))","\#(uid(1))"]}
        """#
        let node = try parseBothWays(json)
        #expect(node.child(ChildKey(uid(1))) == Node("café \(uid(2))"))
        #expect(node.child(ChildKey("café-\(uid(3))")) == Node(uid(4)))
        #expect(node.child("-NqK3x0aB1cD2eF3gH4i") == Node(uid(5)))
        #expect(node.child("short") == Node(uid(6)))
        #expect(node.child(ChildKey("escaped-\(uid(8))")) == Node(uid(9)))
        #expect(node.child("p").priority == .string(uid(10)))
        #expect(node.child("p").child(ChildKey(uid(11))) == Node(uid(12)))
        #expect(node.child("v") == Node(uid(13)).withPriority(.string(uid(14))))
        #expect(node.child(at: Path("a/1")) == Node(uid(1)))
    }

    /// Equal long keys and values share one string.
    @Test func longStringsAreShared() throws {
        let node = try Node(json: #"{"a":{"\#(uid(1))":1},"b":{"\#(uid(1))":"\#(uid(1))"}}"#)
        var keyA = node.child("a").children.keys.first!.string
        var keyB = node.child("b").children.keys.first!.string
        var value = node.child("b").child(ChildKey(uid(1))).stringValue!
        let a = keyA.withUTF8 { $0.baseAddress }, b = keyB.withUTF8 { $0.baseAddress }
        let v = value.withUTF8 { $0.baseAddress }
        #expect(a == b)
        #expect(a == v)
    }

    /// Errors thrown while shared strings are pending in unfinished objects leave no trace: the
    /// next parse of a good document is whole.
    @Test func errorsWithSharedStringsPending() throws {
        let bad = [
            #"{"m":{"\#(uid(1))":"\#(uid(2))","\#(uid(3))":tru}}"#,
            #"{"m":{"\#(uid(1))":"\#(uid(2))",".value":1}}"#,
            #"{"\#(uid(1))":"\#(uid(2))","x":{"\#(uid(3))":"\#(uid(4))"},"#,
            "{\"\(uid(1))\":\"\(uid(2))\",\"\(uid(3))\":\"\u{01}\"}",
            "{\"\(uid(1))\":\"\(uid(2))\",\"bad\":\"\\ud800\"}",
        ]
        for json in bad {
            #expect(throws: DataError.self, "\(json)") { try Node(json: json) }
        }
        // Both parses report the first bad byte.
        let truncated = Array(#"{"\#(uid(1))":"\#(uid(2))","\#(uid(3))":tru}"#.utf8)
        let invalidUTF8 = Array(#"{"\#(uid(1))":"\#(uid(2))","\#(uid(3))":1,"\#(uid(4))"#.utf8) + [0xC3, 0x28]
            + Array(#"":true}"#.utf8)
        for bytes in [truncated, invalidUTF8] {
            var offsets: [Int?] = []
            for options in [JSONParseOptions(), validating] {
                do throws(DataError) {
                    _ = try Node(jsonBytes: bytes, options: options)
                    Issue.record("parsed \(String(decoding: bytes, as: UTF8.self))")
                } catch {
                    offsets.append(error.byteOffset)
                }
            }
            #expect(offsets.count == 2 && offsets[0] == offsets[1] && offsets[0] != nil, "\(offsets)")
        }
        try parseBothWays(#"{"m":{"\#(uid(1))":"\#(uid(2))","\#(uid(3))":true}}"#)
    }

    /// Random documents: long keys and values from a small pool (so they repeat), nested maps,
    /// arrays, duplicates, nulls, priorities and non-ASCII strings; both parses must agree. This
    /// found priorities dropped before the parse settled (see `JSONParser.droppedValues`).
    @Test func randomDocumentsParseAlike() throws {
        var random = SeededGenerator(seed: 17)
        let pool = (0..<60).map { n -> String in
            let length = [14, 15, 16, 20, 28, 32, 33, 48, 49][n % 9]
            let letters = Array("abcXYZ019-_é")
            var s = ""
            while s.utf8.count < length { s.append(letters[Int(random.next() % UInt64(letters.count))]) }
            return s
        }
        func string() -> String { "\"" + pool[Int(random.next() % UInt64(pool.count))] + "\"" }
        func value(_ depth: Int) -> String {
            switch random.next() % (depth > 3 ? 4 : 7) {
            case 0: return string()
            case 1: return "true"
            case 2: return "null"
            case 3: return String(random.next() % 1000)
            case 4: return "[" + (0..<Int(random.next() % 4)).map { _ in value(depth + 1) }.joined(separator: ",") + "]"
            default:
                var members = (0..<Int(random.next() % 30)).map { _ in string() + ":" + value(depth + 1) }
                if random.next() % 5 == 0 { members.append(#"".priority":"# + string()) }
                return "{" + members.joined(separator: ",") + "}"
            }
        }
        for _ in 0..<60 {
            let members = (0..<Int(1 + random.next() % 40)).map { _ in string() + ":" + value(1) }
            try parseBothWays("{" + members.joined(separator: ",") + "}")
        }
    }
}
