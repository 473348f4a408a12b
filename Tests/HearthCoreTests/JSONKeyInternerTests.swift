import Testing
@testable import HearthCore

/// The per-parse table that shares long keys and mid-length values: it must keep answering
/// correctly while it grows (thousands of distinct uids), share one string per distinct key,
/// and never confuse keys of equal length and hash neighbourhood.
@Suite struct JSONKeyInternerTests {
    private func uid(_ n: Int) -> String {
        // 28 characters, differing only near the end so many share their first words.
        let digits = String(n)
        return String(repeating: "u", count: 28 - digits.count) + digits
    }

    @Test func sharesKeysAcrossGrowth() throws {
        let count = 3000
        // Every uid appears as a key in two maps and as a value, so lookups happen before and
        // after each growth of the table.
        var a: [String] = [], b: [String] = []
        for n in 0..<count {
            a.append("\"\(uid(n))\":\"\(uid(count - 1 - n))\"")
            b.append("\"\(uid(count - 1 - n))\":true")
        }
        let node = try Node(json: "{\"a\":{\(a.joined(separator: ","))},\"b\":{\(b.joined(separator: ","))}}")
        #expect(node.child("a").childCount == count)
        #expect(node.child("b").childCount == count)
        for n in stride(from: 0, to: count, by: 97) {
            #expect(node.child("a").child(ChildKey(uid(n))) == Node(uid(count - 1 - n)))
            #expect(node.child("b").child(ChildKey(uid(n))) == Node(true))
        }
        // The two maps' keys for the same uid share one string.
        let keysA = node.child("a").children.keys, keysB = node.child("b").children.keys
        for (ka, kb) in zip(keysA, keysB).prefix(200) {
            #expect(ka == kb)
            var sa = ka.string, sb = kb.string
            let same = sa.withUTF8 { pa in sb.withUTF8 { pb in pa.baseAddress == pb.baseAddress } }
            #expect(same, "\(ka)")
        }
    }

    /// Keys of every interned length that differ from each other in a single byte, at every
    /// position: each must stay its own key (the hash and the comparison cover every byte).
    @Test func keysDifferingInOneByteStayDistinct() throws {
        for length in 16...48 {
            let base = Array(repeating: UInt8(ascii: "k"), count: length)
            var keys = [String(decoding: base, as: UTF8.self)]
            for position in 0..<length {
                var bytes = base
                bytes[position] = UInt8(ascii: "q")
                keys.append(String(decoding: bytes, as: UTF8.self))
            }
            // Each key twice, so the second occurrence must find exactly its own entry.
            let members = (keys + keys).enumerated().map { "\"\($0.element)\":\($0.offset % keys.count)" }
            let node = try Node(json: "{" + members.joined(separator: ",") + "}")
            #expect(node.childCount == keys.count, "length \(length)")
            for (index, key) in keys.enumerated() {
                #expect(node.child(ChildKey(key)) == Node(index), "length \(length), key \(index)")
            }
            // As values too (interned up to 48 bytes).
            let values = try Node(json: "[" + (keys + keys).map { "\"\($0)\"" }.joined(separator: ",") + "]")
            for (index, key) in (keys + keys).enumerated() {
                #expect(values.child(ChildKey(String(index))) == Node(key))
            }
        }
    }

    /// Lengths past the tag's 16-bit length field share it: the byte comparison must still
    /// separate keys that differ only in length or in their last byte.
    @Test func veryLongKeysStayDistinct() throws {
        let base = String(repeating: "x", count: 70_000)
        let keys = [base, base + "y", base + "z", String(repeating: "x", count: 70_000 + 65_536)]
        let members = (keys + keys).enumerated().map { "\"\($0.element)\":\($0.offset % keys.count)" }
        let node = try Node(json: "{" + members.joined(separator: ",") + "}")
        #expect(node.childCount == keys.count)
        for (index, key) in keys.enumerated() {
            #expect(node.child(ChildKey(key)) == Node(index))
        }
    }
}

/// The interner lends shared strings without a retain and pays the retains when the parser
/// settles (`JSONKeyInterner`): every way a parse can destroy what it read before it finishes
/// (errors at any byte, dropped duplicates, replaced `.value` and `.priority`) must settle
/// first, or a string shared by the dropped values and the rest would be freed while in use
/// (a crash or a corrupted tree, which these tests would see).
@Suite struct JSONKeyInternerLendingTests {
    private let uid = "uid0000000000000000000000001"  // 28 bytes: interned, compared in the slot
    private let email = "someone.with.a.long.name.for.testing@example.com"  // 48 bytes: compared in storage

    @Test func slotIsOneCacheLine() {
        #expect(MemoryLayout<JSONKeyInterner.Slot>.stride == 64)
    }

    /// A document where one uid and one email are keys and values at every level.
    private var nested: String {
        var json = "true"
        for level in 0..<6 {
            json = #"{"\#(uid)":\#(json),"a\#(level)":"\#(uid)","\#(email)":"\#(email)","b\#(level)":["\#(uid)","\#(email)"]}"#
        }
        return json
    }

    @Test func errorsAtEveryByteLeaveSharedStringsIntact() throws {
        let valid = try Node(json: nested)
        let bytes = Array(nested.utf8)
        var failures = 0
        for cut in 0..<bytes.count {
            // Truncated, and with the byte at the cut replaced by one no JSON token allows there.
            for variant in [Array(bytes[..<cut]), bytes[..<cut] + [UInt8(ascii: "#")] + bytes[(cut + 1)...]] {
                do {
                    _ = try Node(jsonBytes: variant)
                } catch {
                    failures += 1
                }
            }
        }
        #expect(failures >= bytes.count)
        // The tree parsed first shares nothing with those parses, and reads back whole.
        #expect(try Node(json: nested) == valid)
        #expect(valid.child(ChildKey(uid)).child(ChildKey(email)) == Node(email))
    }

    @Test func droppedAndReplacedValuesLeaveSharedStringsIntact() throws {
        let cases: [(String, Node)] = [
            // A duplicate key drops the first value, which shares the uid with the survivor.
            (#"{"\#(uid)":"\#(uid)","\#(uid)":{"\#(uid)":"\#(uid)"}}"#,
             Node([uid: Node([uid: Node(uid)])])),
            // A later `null` drops the child and its subtree.
            (#"{"x":{"\#(uid)":"\#(email)"},"x":null,"y":"\#(email)"}"#, Node(["y": Node(email)])),
            // A second `.value` replaces the first.
            (#"{".value":"\#(uid)",".value":"\#(uid)"}"#, Node(uid)),
            (#"{"k":{".value":{"\#(uid)":"\#(uid)"},".value":"\#(uid)"}}"#, Node(["k": Node(uid)])),
            // A placeholder priority replaced by a plain one.
            (#"{".priority":{".sv":"\#(uid)"},".priority":"\#(uid)","\#(uid)":1}"#,
             Node([uid: Node(1)]).withPriority(.string(uid))),
            // Priorities that are dropped: replaced by a later `.priority`, set to null, or on a
            // node that ends up empty (all children null, or a null `.value`). Each was made from
            // a lent string; dropping it at once released a reference the string did not yet have,
            // so the only string left (the tree's `a`) was freed and reused while still in the tree.
            (#"{"a":"\#(email)","p":{".priority":"\#(email)",".priority":"\#(email)","y":1},"q":{".priority":"\#(email)","x":null},"r":{".priority":"\#(email)"},"s":{".value":null,".priority":"\#(email)"},"t":{".priority":"\#(email)",".priority":null,"z":2}}"#,
             Node(["a": Node(email), "p": Node(["y": Node(1)]).withPriority(.string(email)), "t": Node(["z": Node(2)])])),
            (#"{"a":"\#(uid)","b":[{".priority":"\#(uid)"},{".priority":"\#(uid)"},{".priority":"\#(uid)"},{".priority":"\#(uid)"},"\#(email)"]}"#,
             Node(["a": Node(uid), "b": Node(["4": Node(email)])])),
            // A `.value` that had a priority of its own, given another or none.
            (#"{"a":"\#(uid)","p":{".value":{".value":1,".priority":"\#(uid)"},".priority":2},"q":{".value":{"x":1,".priority":"\#(uid)"}},"r":{".value":{".priority":"\#(uid)",".value":true}}}"#,
             Node(["a": Node(uid), "p": Node(1).withPriority(.number(2)), "q": Node(["x": Node(1)]), "r": Node(true)])),
        ]
        for _ in 0..<50 {
            for (json, expected) in cases {
                #expect(try Node(json: json) == expected, "\(json)")
            }
        }
    }

    /// `.value` mixed with other keys, and keys rejected while validating a write, throw after
    /// strings were lent.
    @Test func rejectedObjectsLeaveSharedStringsIntact() throws {
        let bad = [
            #"{"\#(uid)":"\#(uid)",".value":"\#(uid)"}"#,
            #"{"a":{"\#(uid)":"\#(uid)"},"b":{"\#(uid)":"\#(uid)","c/d":1}}"#,
            #"{"a":{"\#(uid)":"\#(uid)"},"b":{"\#(uid)":"\#(uid)",".bad":1}}"#,
            #"{"a":{"\#(uid)":"\#(uid)"},".priority":{"\#(uid)":1}}"#,
        ]
        for _ in 0..<50 {
            for json in bad {
                #expect(throws: DataError.self, "\(json)") {
                    try Node(json: json, options: JSONParseOptions(validation: .write(at: Path("w"))))
                }
            }
        }
        #expect(try Node(json: #"{"\#(uid)":"\#(uid)"}"#) == Node([uid: Node(uid)]))
    }
}
