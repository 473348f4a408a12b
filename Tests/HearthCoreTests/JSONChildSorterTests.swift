import Testing
@testable import HearthCore

/// Objects whose keys arrive out of order, large enough for the grouped sort (by first byte, then
/// insertion) and with groups large enough to fall back to the merge sort, checked against
/// `ChildrenMap` insertion: random uids, keys sharing first bytes, integer keys, non-ASCII keys,
/// duplicates (the last wins) and nulls.
@Suite struct JSONChildSorterTests {
    @Test func largeUnorderedObjectsSortLikeMapInsertion() throws {
        var random = SeededGenerator(seed: 7)
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        let tricky = ["7", "07", "-3", "2147483648", "é", "\\u00e9x", "\\ud83d\\ude00", "\\ue000", "\\u0000", "a", "aa", "ab"]
        func uid(prefix: String) -> String {
            prefix + String(decoding: (0..<(28 - prefix.utf8.count)).map { _ in alphabet.randomElement(using: &random)! }, as: UTF8.self)
        }
        for round in 0..<120 {
            let count = [16, 17, 24, 25, 40, 60, 200, 600][round % 8]
            // Some rounds share a first byte among many keys, so a group exceeds the insertion limit.
            let prefix = round % 3 == 0 ? "u" : ""
            var expected = ChildrenMap()
            var members: [String] = []
            var written: [String] = []
            for _ in 0..<count {
                let key: String
                switch Int.random(in: 0..<10, using: &random) {
                case 0: key = tricky.randomElement(using: &random)!
                case 1 where !written.isEmpty: key = written.randomElement(using: &random)!  // a duplicate
                default: key = uid(prefix: prefix)
                }
                written.append(key)
                let decoded = try Node(json: "\"\(key)\"").stringValue!
                if Int.random(in: 0..<12, using: &random) == 0 {
                    members.append("\"\(key)\":null")
                    expected.removeValue(for: ChildKey(decoded))
                } else {
                    let value = Int.random(in: 0..<1000, using: &random)
                    members.append("\"\(key)\":\(value)")
                    expected[ChildKey(decoded)] = Node(value)
                }
            }
            let node = try Node(json: "{" + members.joined(separator: ",") + "}")
            #expect(node.children.keys == expected.keys, "round \(round)")
            #expect(node == Node(children: expected))
            node.children.checkInvariants()
        }
    }
}
