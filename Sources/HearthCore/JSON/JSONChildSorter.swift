/// Sorts the children of one object by key, for objects whose keys arrived out of order (maps
/// keyed by uid, such as voters and followers).
///
/// Sorts (order word, position) pairs, stably: order words decide almost every comparison; only
/// equal words look at the keys.
///
/// Maps of 16 or more children are first distributed by the first byte of their order words (a
/// counting sort, stable), which for uid-keyed maps leaves groups of one or two, and then finished
/// with an insertion sort that only moves children within their group. That replaced, for those
/// maps, a merge sort (insertion-sorted runs of 8, then pairwise merges) that cost ≈ 170
/// instructions per child and 8% of a parse under callgrind; the standard library's `sort(by:)`
/// before it, with its generic comparison closure, cost more. Smaller maps, and maps with a group
/// larger than `groupSizeMax` (keys sharing their first byte, or thousands of uids), keep the
/// merge sort: merge-sorting each large group instead measured no better.
final class JSONChildSorter {
    typealias Element = JSONParser.PendingChildren.Element

    /// Sorting input: a child's order word and its position among the pending children.
    struct SortKey {
        var order: UInt64
        var position: Int
    }

    private var keys: UnsafeMutablePointer<SortKey>
    private var scratch: UnsafeMutablePointer<SortKey>
    private var capacity = 64
    /// Per group (first byte of the order word, see `group(of:)`): its size, then its start,
    /// advanced to its end as the keys are placed.
    private let groupEnds: UnsafeMutablePointer<Int32>

    /// Groups by first byte: ASCII bytes, and 0x80 for every non-ASCII lead byte (the order word
    /// marks it so); integer keys, whose words are below 2^32, fall in group 0.
    static var groupCount: Int { 0x81 }
    /// Maps this large and larger are grouped before sorting: below it, clearing and summing
    /// the group table costs more than the merge sort saves.
    static var groupedSortCountMin: Int { 16 }
    /// A larger group (keys sharing a first byte) would make the insertion sort quadratic: the
    /// map is merge-sorted instead.
    static var groupSizeMax: Int32 { 24 }

    init() {
        keys = .allocate(capacity: capacity)
        scratch = .allocate(capacity: capacity)
        groupEnds = .allocate(capacity: Self.groupCount)
    }

    deinit {
        keys.deallocate()
        scratch.deallocate()
        groupEnds.deallocate()
    }

    /// The group of an order word: its first key byte, capped at 0x80. Never decreases as the
    /// word increases, so sorting the groups' contents sorts the whole.
    @inline(__always)
    static func group(of order: UInt64) -> Int {
        Swift.min(Int(truncatingIfNeeded: (order >> 48) & 0xFF), 0x80)
    }

    /// Children at `positions` of `elements` in key order, equal keys in input order; valid until
    /// the next call.
    func sort(
        orders: UnsafeMutablePointer<UInt64>, elements: UnsafeMutablePointer<Element>, positions: Range<Int>
    ) -> UnsafeBufferPointer<SortKey> {
        let count = positions.count
        if count > capacity {
            keys.deallocate()
            scratch.deallocate()
            capacity = max(count, capacity * 2)
            keys = .allocate(capacity: capacity)
            scratch = .allocate(capacity: capacity)
        }
        for n in 0..<count {
            let position = positions.lowerBound + n
            keys[n] = SortKey(order: orders[position], position: position)
        }
        if count >= Self.groupedSortCountMin, groupedSort(count: count, elements: elements) {
            return UnsafeBufferPointer(start: scratch, count: count)
        }
        let sorted = Self.mergeSort(keys, count: count, scratch: scratch, elements: elements)
        return UnsafeBufferPointer(start: sorted, count: count)
    }

    /// Sorts `keys` into `scratch` by group, then by insertion within groups; false (leaving
    /// `keys` as they were) when a group is larger than `groupSizeMax`.
    private func groupedSort(count: Int, elements: UnsafeMutablePointer<Element>) -> Bool {
        let groupCount = Self.groupCount
        groupEnds.update(repeating: 0, count: groupCount)
        var largest: Int32 = 0
        for n in 0..<count {
            let group = Self.group(of: keys[n].order)
            groupEnds[group] &+= 1
            largest = Swift.max(largest, groupEnds[group])
        }
        if largest > Self.groupSizeMax { return false }
        // Sizes to starts, then placing each key advances its group's start to the group's end.
        var start: Int32 = 0
        for group in 0..<groupCount {
            let size = groupEnds[group]
            groupEnds[group] = start
            start &+= size
        }
        for n in 0..<count {
            let key = keys[n]
            let group = Self.group(of: key.order)
            scratch[Int(groupEnds[group])] = key
            groupEnds[group] &+= 1
        }
        // Every key before a group precedes every key in it, so each insertion stops at its
        // group's start without knowing where that is.
        var i = 1
        while i < count {
            let item = scratch[i]
            var j = i
            while j > 0 && Self.precedes(item, scratch[j - 1], elements) {
                scratch[j] = scratch[j - 1]
                j -= 1
            }
            scratch[j] = item
            i += 1
        }
        return true
    }

    @inline(__always)
    static func precedes(_ a: SortKey, _ b: SortKey, _ elements: UnsafeMutablePointer<Element>) -> Bool {
        if a.order != b.order { return a.order < b.order }
        return ChildKey.compare(elements[a.position].key, elements[b.position].key) < 0
    }

    /// Insertion-sorts runs of 8, then merges runs pairwise, alternating between the two buffers;
    /// returns the buffer that holds the result. Stable: an element moves ahead of another only
    /// when it strictly precedes it.
    static func mergeSort(
        _ keys: UnsafeMutablePointer<SortKey>, count: Int, scratch: UnsafeMutablePointer<SortKey>,
        elements: UnsafeMutablePointer<Element>
    ) -> UnsafeMutablePointer<SortKey> {
        let run = 8
        var start = 0
        while start < count {
            let end = min(start + run, count)
            var i = start + 1
            while i < end {
                let item = keys[i]
                var j = i
                while j > start && precedes(item, keys[j - 1], elements) {
                    keys[j] = keys[j - 1]
                    j -= 1
                }
                keys[j] = item
                i += 1
            }
            start = end
        }
        var source = keys, target = scratch
        var width = run
        while width < count {
            var low = 0
            while low < count {
                let mid = min(low + width, count), high = min(low + 2 * width, count)
                var a = low, b = mid, out = low
                while a < mid && b < high {
                    if precedes(source[b], source[a], elements) {
                        target[out] = source[b]
                        b += 1
                    } else {
                        target[out] = source[a]
                        a += 1
                    }
                    out += 1
                }
                while a < mid {
                    target[out] = source[a]
                    a += 1
                    out += 1
                }
                while b < high {
                    target[out] = source[b]
                    b += 1
                    out += 1
                }
                low = high
            }
            swap(&source, &target)
            width *= 2
        }
        return source
    }
}
