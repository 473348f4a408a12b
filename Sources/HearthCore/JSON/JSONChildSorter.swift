/// Sorts the children of one object by key, for objects whose keys arrived out of order (maps
/// keyed by uid, such as voters and followers).
///
/// A stable merge sort over (order word, position) pairs, written out rather than the standard
/// library's `sort(by:)`: that one calls its comparison closure through a generic insertion sort
/// and merge, and took 7% of a parse under callgrind where maps of 20–60 uids are common. Order
/// words decide almost every comparison; only equal words look at the keys.
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

    init() {
        keys = .allocate(capacity: capacity)
        scratch = .allocate(capacity: capacity)
    }

    deinit {
        keys.deallocate()
        scratch.deallocate()
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
        let sorted = Self.mergeSort(keys, count: count, scratch: scratch, elements: elements)
        return UnsafeBufferPointer(start: sorted, count: count)
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
