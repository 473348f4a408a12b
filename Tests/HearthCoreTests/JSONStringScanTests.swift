import Testing
@testable import HearthCore

/// The string paths of the parser: the 16-byte SIMD scan and its 8-byte and byte-by-byte tails,
/// and strings made from bytes the parser validated (without a second validation by `String`).
/// Each case puts the byte that ends a run at every offset across several 16-byte blocks, with
/// ASCII and non-ASCII text before it.
@Suite struct JSONStringScanTests {
    /// Text whose UTF-8 is exactly `count` bytes: ASCII, or with a two-byte "é" at `accentAt`.
    private func text(count: Int, accentAt: Int?) -> String {
        var bytes = (0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        if let accentAt, accentAt >= 0, accentAt + 1 < count {
            bytes[accentAt] = 0xC3
            bytes[accentAt + 1] = 0xA9
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func valuesOfEveryLengthAroundTheBlockSizes() throws {
        for count in 0..<70 {
            for accentAt in [nil, 0, count / 2, count - 2] as [Int?] {
                let value = text(count: count, accentAt: accentAt)
                // As a value, as a key, and followed by more input (so 16-byte loads fit) or not.
                #expect(try Node(json: "\"\(value)\"") == Node(value))
                let node = try Node(json: "{\"\(value)x\": \"\(value)\", \"z\": [1, 2, 3, 4, 5, 6, 7, 8]}")
                #expect(node.child(ChildKey(value + "x")) == Node(value), "\(count) \(String(describing: accentAt))")
                let made = node.child(ChildKey(value + "x")).stringValue!
                #expect(made.utf8.count == value.utf8.count)
                #expect(made.count == value.count)
                #expect(Set([made, value]).count == 1)
            }
        }
    }

    @Test func escapesAtEveryOffset() throws {
        for offset in 0..<40 {
            for accentAt in [nil, 0, offset / 2] as [Int?] {
                let before = text(count: offset, accentAt: accentAt)
                for (escape, decoded) in [("\\\"", "\""), ("\\\\", "\\"), ("\\n", "\n"), ("\\u00e9", "é"), ("\\ud83d\\ude00", "😀")] {
                    let json = "\"\(before)\(escape)\(before)\""
                    let value = try Node(json: json).stringValue!
                    #expect(value == before + decoded + before, "\(json)")
                    #expect(value.count == (before + decoded + before).count)
                    #expect(value.utf8.elementsEqual((before + decoded + before).utf8))
                }
            }
        }
    }

    @Test func controlBytesAndBadUTF8AreFoundAtTheirOffset() {
        for offset in 0..<40 {
            for accentAt in [nil, 0] as [Int?] {
                let bytes = Array("\"\(text(count: offset, accentAt: accentAt))".utf8)
                let position = bytes.count
                for bad: UInt8 in [0x0A, 0x1F, 0xFF, 0x80] {
                    let input = bytes + [bad] + Array("tail of the string that is long enough\"".utf8)
                    do {
                        _ = try Node(jsonBytes: input)
                        Issue.record("accepted byte \(bad) at \(position)")
                    } catch {
                        #expect(error.code == .invalidJSON)
                        #expect(error.byteOffset == position, "byte \(bad) at \(position)")
                    }
                }
            }
        }
    }

    @Test func stringsOutliveTheInputBytes() throws {
        var node = Node.empty
        do {
            // The bytes are freed when this scope ends; the tree must hold its own copies.
            var input = Array(#"{"k": ["#.utf8)
            for i in 0..<200 {
                if i > 0 { input.append(UInt8(ascii: ",")) }
                input += Array("\"\(text(count: 10 + i, accentAt: i % 3 == 0 ? 5 : nil))\\n\(i)\"".utf8)
            }
            input += Array("]}".utf8)
            node = try Node(jsonBytes: input)
            for i in input.indices { input[i] = 0 }
        }
        for i in 0..<200 {
            let expected = text(count: 10 + i, accentAt: i % 3 == 0 ? 5 : nil) + "\n\(i)"
            #expect(node.child(at: Path("k/\(i)")) == Node(expected))
        }
    }
}
