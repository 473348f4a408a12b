import Foundation
import HearthTesting
import Testing
@testable import HearthCore

/// The node hash against every vector of docs/protocol.md §4.2 (Tests/Fixtures/hash-vectors.json),
/// plus the cases the vectors do not pin down: priority-index order and streaming.
@Suite struct NodeHashTests {
    struct Vector: Decodable, CustomTestStringConvertible {
        let name: String
        let value: FixtureJSON
        let preimage: String?
        let hash: String
        var testDescription: String { name }
    }

    struct Fixture: Decodable { let vectors: [Vector] }

    static let vectors: [Vector] = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/hash-vectors.json")
        do {
            return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url)).vectors
        } catch {
            Issue.record("cannot read \(url.path): \(error)")
            return []
        }
    }()

    @Test func fixtureHoldsEveryVectorOfTheSpec() {
        // 14 upstream rows plus the two intermediate nodes of the nested example, and 8
        // additional rows (null and {} listed separately).
        #expect(Self.vectors.count == 24)
    }

    @Test(arguments: vectors)
    func specVector(_ vector: Vector) {
        let node = vector.value.nodeBuiltByHand
        #expect(node.hash == vector.hash)
        if let preimage = vector.preimage {
            #expect(node.hashPreimage == preimage)
        }
    }

    @Test func largeIntegerIsStoredExactlyAndHashedAsDouble() throws {
        let vector = try #require(Self.vectors.first { $0.hash == "+E+Mxlqh5MhT+On05bjsZ6JaaxI=" })
        let node = vector.value.nodeBuiltByHand
        #expect(node.leafValue == .integer(12_345_678_901_234_568))
        #expect(node.hashPreimage == "priority:string:🐵:number:4345ee2a2eb5a5c4")
    }

    @Test func emptyNodeHashesToEmptyString() {
        #expect(Node.empty.hash == "")
        #expect(Node(children: ChildrenMap()).hash == "")
    }

    @Test func negativeZeroHashesAsZero() {
        // §4.3: clients send -0 as 0, so Node normalises it and the hash follows.
        #expect(Node(-0.0).hash == Node(0).hash)
        #expect(Node(-0.0).hashPreimage == "number:0000000000000000")
    }

    @Test func integerAndEqualDoubleHashAlike() {
        #expect(Node(Int64(10)).hash == "+r5aI9HvKKagELki8SYKBk0q7D4=")
        #expect(Node(10.0).hash == "+r5aI9HvKKagELki8SYKBk0q7D4=")
    }

    @Test func childrenFollowPriorityIndexOrder() {
        // No priority (in key order, integer keys first), then numbers ascending, then strings in
        // UTF-16 order; equal priorities fall back to key order.
        var children = ChildrenMap()
        children["b"] = Node(1).withPriority(.string("z"))
        children["a"] = Node(2).withPriority(.string("z"))
        children["c"] = Node(3).withPriority(.number(-5))
        children["d"] = Node(4).withPriority(.number(2))
        children["10"] = Node(5).withPriority(.number(2))
        children["e"] = Node(6)
        children["9"] = Node(7)
        children["f"] = Node(8).withPriority(.string("🐵"))
        children["g"] = Node(9).withPriority(.string("\u{E000}"))
        let node = Node(children: children)
        let order = node.hashPreimage.split(separator: ":").enumerated()
            .filter { $0.offset % 2 == 0 }.map(\.element)
        #expect(order == ["9", "e", "c", "10", "d", "a", "b", "f", "g"])
    }

    @Test func streamedHashMatchesHashOfTheBuiltPreimage() {
        // The streaming writer must agree with the plain definition: SHA-1 of the concatenated
        // string, built here the slow way.
        var children = ChildrenMap()
        for index in 0..<5_000 {
            var child = index % 3 == 0 ? Node("v\(index)") : Node(Int64(index))
            if index % 7 == 0 { child = child.withPriority(.number(Double(index % 11))) }
            children[ChildKey("k\(index)")] = child
        }
        let node = Node(children: children).withPriority(.string("top"))
        let preimage = node.hashPreimage
        var sha = SHA1()
        sha.update(preimage)
        let expected = sha.finalize().withUnsafeBytes { Base64.encode($0) }
        #expect(node.hash == expected)
        #expect(preimage.hasPrefix("priority:string:top::k1:"))
    }
}
