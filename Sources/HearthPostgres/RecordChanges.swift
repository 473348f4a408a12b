import HearthCore
import HearthStorage

/// What a group of batches does to a namespace's records, as set operations: every removal first, then
/// every upsert. Decided in memory so that a commit of many batches is a handful of statements (one per
/// kind of change, arrays as parameters) instead of one statement per operation.
///
/// Applying the operations in order and applying ``removedEverything``, ``removedRecords``,
/// ``removedRanges`` then ``upserts`` give the same records: an upsert that a later operation removes is
/// dropped here, and any upsert that survives came after every removal that covers its path, so putting
/// it back after all the removals is what the order would have done.
///
///     var changes = RecordChanges()
///     changes.apply(batch)   // [.removeSubtree(a), .put(a, {b: 1})]
///     // removedRanges: [a␁, a␂), upserts: [a␁b␁: 1]
struct RecordChanges {
    /// The namespace's records all go first (a set or removal at the root).
    private(set) var removedEverything = false
    /// Single records removed (leaves, or priority markers of inner nodes).
    private(set) var removedRecords: Set<[UInt8]> = []
    /// Subtrees removed: every record with `low <= path < high`.
    private(set) var removedRanges: [(low: [UInt8], high: [UInt8])] = []
    /// Records written, by path; the last write of a path wins.
    private(set) var upserts = SortedMap<RecordKey, StoredRecord>()

    /// True when applying this changes nothing.
    var isEmpty: Bool { !removedEverything && removedRecords.isEmpty && removedRanges.isEmpty && upserts.isEmpty }

    /// Adds a batch's operations, after every operation added so far.
    mutating func apply(_ batch: WriteBatch) {
        for operation in batch.operations { apply(operation) }
    }

    mutating func apply(_ operation: WriteBatch.Operation) {
        switch operation {
        case .removeSubtree(let path):
            let low = EncodedPath(path)
            if low.isRoot {
                // Everything goes: what was removed or written before no longer matters.
                removedEverything = true
                removedRecords = []
                removedRanges = []
                upserts = SortedMap()
                return
            }
            let high = low.subtreeEnd
            removeUpserts(from: RecordKey(bytes: low.bytes), below: RecordKey(bytes: high))
            removedRanges.append((low.bytes, high))
        case .removeRecord(let path):
            let key = EncodedPath(path).bytes
            upserts.removeValue(for: RecordKey(bytes: key))
            removedRecords.insert(key)
        case .put(let path, let node):
            var encoded = EncodedPath(path)
            put(node, at: &encoded)
        case .putPriority(let path, let priority):
            upserts.insert(StoredRecord(leaf: nil, priority: priority), for: RecordKey(bytes: EncodedPath(path).bytes))
        }
    }

    private mutating func put(_ node: Node, at path: inout EncodedPath) {
        StoredRecord.forEach(in: node, at: &path) { bytes, record in
            upserts.insert(record, for: RecordKey(bytes: bytes))
        }
    }

    private mutating func removeUpserts(from low: RecordKey, below high: RecordKey) {
        let rank = upserts.rank(of: low)
        while rank < upserts.count {
            let key = upserts.element(atRank: rank).key
            guard key < high else { return }
            upserts.removeValue(for: key)
        }
    }
}
