import HearthCore
import HearthStorage
import Testing

/// Batches of every kind of operation, with priorities, nested nodes and non-ASCII keys.
private let sampleBatches: [WriteBatch] = [
    WriteBatch(operations: [
        .removeSubtree(Path("users/ada")),
        .put(Path("users/ada"), Node(["name": Node("Ada"), "born": Node(1815), "score": Node(2.5)])),
    ]),
    WriteBatch(operations: [
        .removeRecord(Path("rooms/r1")),
        .put(Path("rooms/r1/title"), Node("Café ☕").withPriority(.number(3))),
        .put(Path("flags/on"), Node(true)),
        .putPriority(Path("rooms/r1"), .string("a")),
        .putPriority(Path("rooms/r2"), .number(-0.5)),
    ]),
    WriteBatch(operations: [.removeSubtree(.root), .put(.root, Node(["ключ": Node(["x": Node(false)]).withPriority(.number(1))]))]),
]

@Test func writeBatchesDecodeToTheOperationsTheyEncoded() throws {
    var bytes: [UInt8] = []
    WriteBatch.encode(sampleBatches, into: &bytes)
    let decoded = try bytes.withUnsafeBytes { try WriteBatch(decoding: $0) }
    #expect(decoded.operations == sampleBatches.flatMap(\.operations))
}

@Test func theBatchesOfAGroupDecodeOneByOne() throws {
    var bytes: [UInt8] = []
    WriteBatch.encode(sampleBatches, into: &bytes)
    #expect(try bytes.withUnsafeBytes { try WriteBatch.decodeBatches($0) } == sampleBatches)
    // Version 1 (before batches were marked) reads as one batch; a batch end in it is damage.
    var one: [UInt8] = []
    WriteBatch.encode([WriteBatch(operations: sampleBatches.flatMap(\.operations))], into: &one)
    one[0] = 1
    #expect(try one.withUnsafeBytes { try WriteBatch.decodeBatches($0) } == [WriteBatch(operations: sampleBatches.flatMap(\.operations))])
    var marked = bytes
    marked[0] = 1
    #expect { try marked.withUnsafeBytes { try WriteBatch.decodeBatches($0) } } throws: { ($0 as? StorageError)?.code == .corrupt }
}

/// Version 3 carries each batch's write ID (servers following PostgreSQL's change log learn which client
/// writes another server applied); a group without one stays version 2, which older servers read.
@Test func theWriteIDsOfAGroupDecodeWithTheirBatches() throws {
    var withIDs = sampleBatches
    withIDs[0].writeID = "0123456789abcdefghijklmnop-1"
    withIDs[2].writeID = "x"
    withIDs.append({ var empty = WriteBatch(operations: []); empty.writeID = "nothing-changed"; return empty }())
    var bytes: [UInt8] = []
    WriteBatch.encode(withIDs, into: &bytes)
    #expect(bytes[0] == 3)
    #expect(try bytes.withUnsafeBytes { try WriteBatch.decodeBatches($0) } == withIDs)
    var plain: [UInt8] = []
    WriteBatch.encode(sampleBatches, into: &plain)
    #expect(plain[0] == 2)
    // An ID's tag in a version 2 encoding is damage, as is an ID cut short.
    var older = bytes
    older[0] = 2
    #expect { try older.withUnsafeBytes { try WriteBatch.decodeBatches($0) } } throws: { ($0 as? StorageError)?.code == .corrupt }
    let cut = Array(bytes.dropLast(3))
    #expect { try cut.withUnsafeBytes { try WriteBatch.decodeBatches($0) } } throws: { ($0 as? StorageError)?.code == .corrupt }
}

@Test func anEmptyGroupEncodesToNoOperations() throws {
    var bytes: [UInt8] = []
    WriteBatch.encode([WriteBatch](), into: &bytes)
    #expect(try bytes.withUnsafeBytes { try WriteBatch(decoding: $0) }.operations.isEmpty)
}

@Test func truncatedOrDamagedEncodingsAreCorruptNotACrash() throws {
    var bytes: [UInt8] = []
    WriteBatch.encode(sampleBatches, into: &bytes)
    // Cutting the bytes short anywhere but at an operation boundary, or damaging the tag or version
    // byte, is reported as corrupt; no cut may crash or decode to more than was encoded.
    let full = sampleBatches.flatMap(\.operations)
    var rejected = 0
    for length in 0..<bytes.count {
        do {
            let decoded = try Array(bytes[..<length]).withUnsafeBytes { try WriteBatch(decoding: $0) }
            #expect(decoded.operations.count < full.count)
            #expect(Array(full.prefix(decoded.operations.count)) == decoded.operations)
        } catch {
            #expect((error as? StorageError)?.code == .corrupt)
            rejected += 1
        }
    }
    #expect(rejected > bytes.count / 2)
    var badVersion = bytes
    badVersion[0] = 9
    #expect { try badVersion.withUnsafeBytes { try WriteBatch(decoding: $0) } } throws: { ($0 as? StorageError)?.code == .corrupt }
    var badTag = bytes
    badTag[1] = 0x7F
    #expect { try badTag.withUnsafeBytes { try WriteBatch(decoding: $0) } } throws: { ($0 as? StorageError)?.code == .corrupt }
    // A length larger than the rest of the input.
    let hugeLength: [UInt8] = [1, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]
    #expect { try hugeLength.withUnsafeBytes { try WriteBatch(decoding: $0) } } throws: { ($0 as? StorageError)?.code == .corrupt }
}
