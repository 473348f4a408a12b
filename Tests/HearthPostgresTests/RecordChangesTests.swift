import HearthCore
@testable import HearthPostgres
import HearthStorage
import HearthSupport
import Testing

/// The records a tree is stored as, by path: what `hearth_records` holds for one namespace.
private func records(of root: Node) -> [RecordKey: StoredRecord] {
    var records: [RecordKey: StoredRecord] = [:]
    var path = EncodedPath()
    StoredRecord.forEach(in: root, at: &path) { bytes, record in records[RecordKey(bytes: bytes)] = record }
    return records
}

/// Applies operations one by one, the way the SQLite engine's statements do.
private func applyInOrder(_ batches: [WriteBatch], to records: inout [RecordKey: StoredRecord]) {
    for operation in batches.flatMap(\.operations) {
        switch operation {
        case .removeSubtree(let path):
            let low = EncodedPath(path)
            if low.isRoot {
                records = [:]
            } else {
                let high = RecordKey(bytes: low.subtreeEnd)
                let start = RecordKey(bytes: low.bytes)
                records = records.filter { !(start <= $0.key && $0.key < high) }
            }
        case .removeRecord(let path):
            records[RecordKey(bytes: EncodedPath(path).bytes)] = nil
        case .put(let path, let node):
            var encoded = EncodedPath(path)
            StoredRecord.forEach(in: node, at: &encoded) { bytes, record in records[RecordKey(bytes: bytes)] = record }
        case .putPriority(let path, let priority):
            records[RecordKey(bytes: EncodedPath(path).bytes)] = StoredRecord(leaf: nil, priority: priority)
        }
    }
}

/// Applies the set operations the way the commit's statements do: removals, then upserts.
private func applySetwise(_ changes: RecordChanges, to records: inout [RecordKey: StoredRecord]) {
    if changes.removedEverything { records = [:] }
    for path in changes.removedRecords { records[RecordKey(bytes: path)] = nil }
    for range in changes.removedRanges {
        let low = RecordKey(bytes: range.low), high = RecordKey(bytes: range.high)
        records = records.filter { !(low <= $0.key && $0.key < high) }
    }
    changes.upserts.forEach { key, record in
        records[key] = record
        return true
    }
}

@Test func groupedChangesMatchOperationsAppliedInOrder() throws {
    var random = SplitMix64(seed: 11)
    let keys = ["a", "b", "1", "c"]
    for round in 0..<300 {
        var tree = DatabaseTree()
        // A starting tree, then a group of random writes as the batches DurableDatabase would make.
        for _ in 0..<random.next(below: 6) {
            _ = try tree.set(Path([ChildKey(keys[random.next(below: 4)])]), to: try Node(json: #"{"x": {"y": 1, ".priority": 2}, "z": "s"}"#))
        }
        let start = tree.root
        var batches: [WriteBatch] = []
        for _ in 0..<(1 + random.next(below: 12)) {
            let path = Path((0..<(random.next(below: 4))).map { _ in ChildKey(keys[random.next(below: 4)]) })
            let before = tree.root
            let changes: ChangeSet
            switch random.next(below: 6) {
            case 0: changes = try tree.set(path, to: .empty)
            case 1 where !path.isRoot: changes = try tree.set(path.appending(.priorityKey), to: Node(random.next(below: 3)))
            case 2: changes = try tree.update(path, with: [("x", Node(1)), ("y/z", .empty), ("w", Node(["q": Node(true)]))])
            case 3: changes = try tree.set(path, to: try Node(json: #"{".priority": "p", "k": 1.5, "1": {"z": false}}"#))
            default: changes = try tree.set(path, to: Node(random.next(below: 100)))
            }
            batches.append(WriteBatch(changes: changes, before: before, after: tree.root))
        }
        var grouped = RecordChanges()
        for batch in batches { grouped.apply(batch) }
        var inOrder = records(of: start)
        var setwise = inOrder
        applyInOrder(batches, to: &inOrder)
        applySetwise(grouped, to: &setwise)
        #expect(setwise == inOrder, "round \(round)")
        // And both are the records of the tree the writes made.
        #expect(inOrder == records(of: tree.root), "round \(round)")
    }
}

@Test func removingEverythingForgetsEarlierChanges() {
    var changes = RecordChanges()
    changes.apply(WriteBatch(operations: [.put("a", Node(1)), .removeRecord("b"), .removeSubtree("c")]))
    changes.apply(WriteBatch(operations: [.removeSubtree(.root), .put("d", Node(2))]))
    #expect(changes.removedEverything)
    #expect(changes.removedRecords.isEmpty && changes.removedRanges.isEmpty)
    #expect(changes.upserts.keys == [RecordKey(bytes: EncodedPath("d").bytes)])
}

@Test func aRemovedSubtreeDropsEarlierUpsertsInsideItOnly() {
    var changes = RecordChanges()
    changes.apply(WriteBatch(operations: [.put("a", Node(["b": Node(1), "c": Node(2)])), .put("ab", Node(3)), .put("a!", Node(4))]))
    changes.apply(WriteBatch(operations: [.removeSubtree("a")]))
    // `ab` and `a!` share bytes with `a` but are not below it.
    #expect(changes.upserts.keys.map { String(decoding: $0.bytes, as: UTF8.self) } == ["a!\u{1}", "ab\u{1}"])
    #expect(changes.removedRanges.count == 1)
}
