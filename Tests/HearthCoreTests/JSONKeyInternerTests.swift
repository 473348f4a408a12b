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
