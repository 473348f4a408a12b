import HearthCore
import HearthStorage
#if canImport(Glibc)
    import Glibc
#endif

/// One row of `hearth_records`: a leaf's value with its priority, or (with `leaf` nil) the priority
/// marker of an inner node (docs/storage.md, PostgreSQL).
struct StoredRecord: Sendable, Equatable {
    var leaf: LeafValue?
    var priority: Priority?
}

/// A record's ``EncodedPath`` bytes as a key ordered the way PostgreSQL orders `bytea` (bytewise, a prefix
/// first): the order of `hearth_records`' primary key, so a subtree is one key range here as there.
struct RecordKey: ThreeWayComparable, Hashable, Sendable {
    var bytes: [UInt8]

    static func compare(_ lhs: RecordKey, _ rhs: RecordKey) -> Int {
        let common = min(lhs.bytes.count, rhs.bytes.count)
        let order = lhs.bytes.withUnsafeBufferPointer { left in
            rhs.bytes.withUnsafeBufferPointer { right -> Int32 in
                guard common > 0, let l = left.baseAddress, let r = right.baseAddress else { return 0 }
                return memcmp(l, r, common)
            }
        }
        if order != 0 { return order < 0 ? -1 : 1 }
        return lhs.bytes.count < rhs.bytes.count ? -1 : (lhs.bytes.count == rhs.bytes.count ? 0 : 1)
    }

    static func < (lhs: RecordKey, rhs: RecordKey) -> Bool { compare(lhs, rhs) < 0 }
}
