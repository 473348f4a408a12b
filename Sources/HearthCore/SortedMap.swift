/// An ordered map with value semantics, structural sharing and order statistics: a B-tree whose
/// nodes are shared between copies and copied only along the path a mutation takes.
///
/// Copying a map is O(1). Lookup, insert and remove are O(log n); `element(atRank:)` and
/// `rank(of:)` are O(log n) too, which is what limit windows over millions of children need.
/// A map that is not shared mutates in place, so a tree that nobody snapshots pays no copying.
///
///     var m = SortedMap<ChildKey, Int>()
///     m[ChildKey("b")] = 2; m[ChildKey("a")] = 1
///     m.element(atRank: 0)   // (a, 1)
public struct SortedMap<Key: ThreeWayComparable & Sendable, Value: Sendable>: Sendable {
    public typealias Element = (key: Key, value: Value)

    /// Most maps in a JSON document are small objects, so a map of up to `smallCountMax`
    /// entries is one sorted array (one allocation) and only larger maps become a B-tree.
    @usableFromInline
    enum Storage: Sendable {
        case small(ContiguousArray<SortedMapEntry<Key, Value>>)
        case tree(SortedMapNode<Key, Value>)
    }

    /// nil when empty; a `.small` array is never empty.
    @usableFromInline var storage: Storage?

    @inlinable static var smallCountMax: Int { SortedMapNode<Key, Value>.maxEntries }

    @inlinable public init() { storage = nil }

    /// Builds a map from elements already sorted by key with no duplicates, in O(n).
    public init(sortedUniqueElements elements: some Collection<Element>) {
        self.init(sortedUniqueArray: ContiguousArray(elements))
    }

    /// Builds a map that adopts an array already sorted by key with no duplicates (no copy when
    /// the map is small).
    @inlinable
    public init(sortedUniqueArray array: ContiguousArray<Element>) {
        self.init(sortedUniqueEntries: ContiguousArray(array.lazy.map { SortedMapEntry($0) }))
    }

    /// Adopts an array of entries already sorted by key with no duplicates.
    @inlinable
    init(sortedUniqueEntries array: ContiguousArray<SortedMapEntry<Key, Value>>) {
        if array.isEmpty {
            storage = nil
        } else if array.count <= Self.smallCountMax {
            storage = .small(array)
        } else {
            storage = .tree(SortedMapNode.build(array[...]))
        }
    }

    /// Builds a map by moving `count` elements, sorted by key with no duplicates, out of
    /// `source`, which is left uninitialized. For bulk loaders such as the JSON parser and the
    /// SQLite load: copying would retain and release every key and value, and copying a slice of
    /// tuples runs the runtime's generic `swift_arrayInitWithCopy` (8% of a parse under callgrind).
    @inlinable
    public init(movingSortedUnique source: UnsafeMutablePointer<Element>, count: Int) {
        let entries = UnsafeMutablePointer<SortedMapEntry<Key, Value>>.allocate(capacity: count)
        defer { entries.deallocate() }
        for i in 0..<count { (entries + i).initialize(to: SortedMapEntry((source + i).move())) }
        self.init(movingSortedUniqueEntries: entries, count: count)
    }

    /// `init(movingSortedUnique:count:)` from entries, which move without conversion.
    @inlinable
    init(movingSortedUniqueEntries source: UnsafeMutablePointer<SortedMapEntry<Key, Value>>, count: Int) {
        if count == 0 {
            storage = nil
        } else if count <= Self.smallCountMax {
            storage = .small(SortedMapNode<Key, Value>.moveArray(from: source, count: count))
        } else {
            storage = .tree(SortedMapNode.build(moving: source, count: count))
        }
    }

    @inlinable public var count: Int {
        switch storage {
        case nil: return 0
        case .small(let entries)?: return entries.count
        case .tree(let node)?: return node.count
        }
    }

    @inlinable public var isEmpty: Bool { storage == nil }

    /// True when both maps share the same storage, so they are equal without looking inside.
    @inlinable public func isIdentical(to other: SortedMap) -> Bool {
        switch (storage, other.storage) {
        case (nil, nil): return true
        case let (.tree(a)?, .tree(b)?): return a === b
        case let (.small(a)?, .small(b)?):
            return a.withUnsafeBufferPointer { pa in b.withUnsafeBufferPointer { pb in pa.baseAddress == pb.baseAddress } }
        default: return false
        }
    }

    @inlinable
    public subscript(key: Key) -> Value? {
        get {
            switch storage {
            case nil: return nil
            case .small(let entries)?:
                let (index, found) = SortedMapNode<Key, Value>.slot(of: key, in: entries)
                return found ? entries[index].value : nil
            case .tree(let node)?: return node.find(key)
            }
        }
        set {
            if let newValue { insert(newValue, for: key) } else { removeValue(for: key) }
        }
    }

    /// Inserts or replaces; returns the previous value.
    @inlinable @discardableResult
    public mutating func insert(_ value: Value, for key: Key) -> Value? {
        switch storage {
        case nil:
            storage = .small([SortedMapEntry(key: key, value: value)])
            return nil
        case .small(var entries)?:
            storage = nil  // drop this reference so `entries` is uniquely held and mutates in place
            let (index, found) = SortedMapNode<Key, Value>.slot(of: key, in: entries)
            var previous: Value?
            if found {
                previous = entries[index].value
                entries[index].value = value
            } else {
                entries.insert(SortedMapEntry(key: key, value: value), at: index)
            }
            self = SortedMap(sortedUniqueEntries: entries)
            return previous
        case .tree(var root)?:
            storage = nil
            if !isKnownUniquelyReferenced(&root) { root = root.copy() }
            let (previous, split) = root.insert(key, value)
            if let split {
                root = SortedMapNode<Key, Value>(entries: [split.median], children: [root, split.right])
            }
            storage = .tree(root)
            return previous
        }
    }

    @inlinable @discardableResult
    public mutating func removeValue(for key: Key) -> Value? {
        switch storage {
        case nil:
            return nil
        case .small(var entries)?:
            let (index, found) = SortedMapNode<Key, Value>.slot(of: key, in: entries)
            guard found else { return nil }
            storage = nil
            let removed = entries.remove(at: index).value
            if !entries.isEmpty { storage = .small(entries) }
            return removed
        case .tree(var root)?:
            guard root.find(key) != nil else { return nil }
            storage = nil
            if !isKnownUniquelyReferenced(&root) { root = root.copy() }
            let removed = root.remove(key)
            if root.entries.isEmpty {
                if let only = root.children.first { storage = .tree(only) }
            } else {
                storage = .tree(root)
            }
            return removed
        }
    }

    /// Mutates the value stored at `key` in place and returns true; returns false, changing
    /// nothing, when the key is absent. In place matters: a value that is itself a COW tree stays
    /// uniquely referenced while `body` runs, so it mutates without copying.
    @inlinable @discardableResult
    public mutating func modifyExisting(_ key: Key, _ body: (inout Value) -> Void) -> Bool {
        switch storage {
        case nil:
            return false
        case .small(var entries)?:
            let (index, found) = SortedMapNode<Key, Value>.slot(of: key, in: entries)
            guard found else { return false }
            storage = nil
            body(&entries[index].value)
            storage = .small(entries)
            return true
        case .tree(var root)?:
            storage = nil
            defer { storage = .tree(root) }
            if !isKnownUniquelyReferenced(&root) { root = root.copy() }
            var node = root
            while true {
                let (index, found) = node.slot(of: key)
                if found {
                    body(&node.entries[index].value)
                    return true
                }
                if node.isLeaf { return false }
                node.makeChildUnique(index)
                node = node.children[index]
            }
        }
    }

    /// The element at a position in key order (0-based).
    @inlinable public func element(atRank rank: Int) -> Element {
        precondition(rank >= 0 && rank < count, "rank out of range")
        switch storage! {
        case .small(let entries): return entries[rank].tuple
        case .tree(let node): return node.element(atRank: rank).tuple
        }
    }

    /// How many keys order strictly before the probe: `compare(key)` is negative when `key` is
    /// below the probe, zero when equal, positive above. With a probe between keys this is the rank
    /// of the first key at or above it.
    @inlinable public func rank(where compare: (Key) -> Int) -> Int {
        switch storage {
        case nil: return 0
        case .small(let entries)?:
            var low = 0, high = entries.count
            while low < high {
                let mid = (low + high) >> 1
                if compare(entries[mid].key) < 0 { low = mid + 1 } else { high = mid }
            }
            return low
        case .tree(let node)?: return node.rank(where: compare)
        }
    }

    /// Number of keys strictly below `key`.
    @inlinable public func rank(of key: Key) -> Int {
        rank { Key.compare($0, key) }
    }

    @inlinable public var first: Element? { isEmpty ? nil : element(atRank: 0) }
    @inlinable public var last: Element? { isEmpty ? nil : element(atRank: count - 1) }

    /// Calls `body` for each element in key order, from `rank` on, until it returns false.
    @inlinable public func forEach(fromRank rank: Int = 0, _ body: (Key, Value) throws -> Bool) rethrows {
        switch storage {
        case nil: return
        case .small(let entries)?:
            var i = Swift.max(0, rank)
            while i < entries.count {
                if try !body(entries[i].key, entries[i].value) { return }
                i += 1
            }
        case .tree(let node)?:
            guard rank < node.count else { return }
            _ = try node.visit(fromRank: Swift.max(0, rank), body)
        }
    }

    /// Calls `body` for each element in descending key order, from `rank` down, until it returns false.
    @inlinable public func forEachReversed(fromRank rank: Int, _ body: (Key, Value) throws -> Bool) rethrows {
        guard rank >= 0 else { return }
        switch storage {
        case nil: return
        case .small(let entries)?:
            var i = Swift.min(rank, entries.count - 1)
            while i >= 0 {
                if try !body(entries[i].key, entries[i].value) { return }
                i -= 1
            }
        case .tree(let node)?:
            _ = try node.visitReversed(fromRank: Swift.min(rank, node.count - 1), body)
        }
    }

    public var keys: [Key] {
        var result: [Key] = []
        result.reserveCapacity(count)
        forEach { key, _ in result.append(key); return true }
        return result
    }
}

extension SortedMap: Sequence {
    public func makeIterator() -> IndexingIterator<[Element]> {
        var all: [Element] = []
        all.reserveCapacity(count)
        forEach { all.append(($0, $1)); return true }
        return all.makeIterator()
    }
}

/// One stored key and value (see `SortedMapNode.Element`).
@usableFromInline
struct SortedMapEntry<Key: Sendable, Value: Sendable>: Sendable {
    @usableFromInline var key: Key
    @usableFromInline var value: Value

    @inlinable init(key: Key, value: Value) {
        self.key = key
        self.value = value
    }

    @inlinable init(_ element: (key: Key, value: Value)) {
        key = element.key
        value = element.value
    }

    @inlinable var tuple: (key: Key, value: Value) { (key, value) }
}

/// One B-tree node. A node is shared between maps until one of them mutates it; mutation happens
/// only on nodes the mutating map holds uniquely (`isKnownUniquelyReferenced`), so shared nodes are
/// never changed.
@usableFromInline
final class SortedMapNode<Key: ThreeWayComparable & Sendable, Value: Sendable>: @unchecked Sendable {
    // Sendable: a node is mutated only while uniquely referenced, so no other thread can see it.
    /// A struct rather than the map's public `(key:value:)` tuple: arrays of tuples are copied
    /// and destroyed through the runtime's generic tuple witnesses (`tuple_destroy`, 2.5% of a
    /// parse and most of freeing a parsed tree under callgrind); a struct's are specialized code.
    @usableFromInline typealias Element = SortedMapEntry<Key, Value>

    /// Most entries in a node; a node that grows past it splits.
    @usableFromInline static var maxEntries: Int { 32 }
    /// Fewest entries a non-root node keeps after a removal when it can.
    @usableFromInline static var minEntries: Int { 16 }

    @usableFromInline var entries: ContiguousArray<Element>
    /// Empty for leaves; otherwise `entries.count + 1` children.
    @usableFromInline var children: ContiguousArray<SortedMapNode>
    /// Entries in this subtree.
    @usableFromInline var count: Int

    @inlinable
    init(entries: ContiguousArray<Element>, children: ContiguousArray<SortedMapNode>) {
        self.entries = entries
        self.children = children
        var total = entries.count
        for child in children { total += child.count }
        self.count = total
    }

    @inlinable
    init(entries: ContiguousArray<Element>, children: ContiguousArray<SortedMapNode>, count: Int) {
        self.entries = entries
        self.children = children
        self.count = count
    }

    @inlinable var isLeaf: Bool { children.isEmpty }

    @inlinable func copy() -> SortedMapNode { SortedMapNode(entries: entries, children: children, count: count) }

    /// Index of the first entry whose key is not below `key`, and whether it equals `key`.
    @inlinable
    func slot(of key: Key) -> (index: Int, found: Bool) { Self.slot(of: key, in: entries) }

    /// Index of the first entry whose key is not below `key` in a sorted array, and whether it
    /// equals `key`.
    @inlinable
    static func slot(of key: Key, in entries: ContiguousArray<Element>) -> (index: Int, found: Bool) {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) >> 1
            let c = Key.compare(entries[mid].key, key)
            if c < 0 {
                low = mid + 1
            } else if c > 0 {
                high = mid
            } else {
                return (mid, true)
            }
        }
        return (low, false)
    }

    @inlinable
    func find(_ key: Key) -> Value? {
        var node = self
        while true {
            let (index, found) = node.slot(of: key)
            if found { return node.entries[index].value }
            if node.isLeaf { return nil }
            node = node.children[index]
        }
    }

    @inlinable
    func makeChildUnique(_ index: Int) {
        if !isKnownUniquelyReferenced(&children[index]) { children[index] = children[index].copy() }
    }

    /// Inserts into this (uniquely held) subtree; returns the replaced value and, when this node
    /// overflowed, the median and new right sibling for the parent to adopt.
    @inlinable
    func insert(_ key: Key, _ value: Value) -> (Value?, (median: Element, right: SortedMapNode)?) {
        let (index, found) = slot(of: key)
        if found {
            let previous = entries[index].value
            entries[index].value = value
            return (previous, nil)
        }
        if isLeaf {
            entries.insert(Element(key: key, value: value), at: index)
            count += 1
        } else {
            makeChildUnique(index)
            let (previous, split) = children[index].insert(key, value)
            if previous != nil { return (previous, nil) }
            count += 1
            if let split {
                entries.insert(split.median, at: index)
                children.insert(split.right, at: index + 1)
            }
        }
        return (nil, entries.count > Self.maxEntries ? splitInHalf() : nil)
    }

    @inlinable
    func splitInHalf() -> (median: Element, right: SortedMapNode) {
        let middle = entries.count / 2
        let median = entries[middle]
        let rightEntries = ContiguousArray(entries[(middle + 1)...])
        let rightChildren = isLeaf ? [] : ContiguousArray(children[(middle + 1)...])
        entries.removeSubrange(middle...)
        if !isLeaf { children.removeSubrange((middle + 1)...) }
        let right = SortedMapNode(entries: rightEntries, children: rightChildren)
        count -= right.count + 1
        return (median, right)
    }

    /// Removes a key known to be present from this (uniquely held) subtree.
    @inlinable
    func remove(_ key: Key) -> Value {
        let (index, found) = slot(of: key)
        count -= 1
        if isLeaf {
            precondition(found, "remove(_:) called for a missing key")
            return entries.remove(at: index).value
        }
        let removed: Value
        if found {
            removed = entries[index].value
            makeChildUnique(index)
            entries[index] = children[index].removeLast()
        } else {
            makeChildUnique(index)
            removed = children[index].remove(key)
        }
        rebalance(child: index)
        return removed
    }

    @inlinable
    func removeLast() -> Element {
        count -= 1
        if isLeaf { return entries.removeLast() }
        let last = children.count - 1
        makeChildUnique(last)
        let element = children[last].removeLast()
        rebalance(child: last)
        return element
    }

    /// Restores the occupancy of child `index` after a removal: borrow from a sibling that has
    /// entries to spare, else merge with one.
    @inlinable
    func rebalance(child index: Int) {
        let child = children[index]
        guard child.entries.count < Self.minEntries else { return }
        if index > 0, children[index - 1].entries.count > Self.minEntries {
            makeChildUnique(index - 1)
            let left = children[index - 1]
            let borrowed = left.entries.removeLast()
            child.entries.insert(entries[index - 1], at: 0)
            entries[index - 1] = borrowed
            left.count -= 1
            child.count += 1
            if !left.isLeaf {
                let moved = left.children.removeLast()
                left.count -= moved.count
                child.children.insert(moved, at: 0)
                child.count += moved.count
            }
        } else if index + 1 < children.count, children[index + 1].entries.count > Self.minEntries {
            makeChildUnique(index + 1)
            let right = children[index + 1]
            let borrowed = right.entries.removeFirst()
            child.entries.append(entries[index])
            entries[index] = borrowed
            right.count -= 1
            child.count += 1
            if !right.isLeaf {
                let moved = right.children.removeFirst()
                right.count -= moved.count
                child.children.append(moved)
                child.count += moved.count
            }
        } else if index > 0 {
            makeChildUnique(index - 1)
            merge(at: index - 1)
        } else if index + 1 < children.count {
            makeChildUnique(index + 1)
            merge(at: index)
        }
    }

    /// Merges child `index + 1` and separator `index` into child `index` (both uniquely held).
    @inlinable
    func merge(at index: Int) {
        let left = children[index]
        let right = children.remove(at: index + 1)
        left.entries.append(entries.remove(at: index))
        left.entries.append(contentsOf: right.entries)
        left.children.append(contentsOf: right.children)
        left.count += right.count + 1
    }

    @inlinable
    func element(atRank rank: Int) -> Element {
        var node = self
        var rank = rank
        while true {
            if node.isLeaf { return node.entries[rank] }
            var index = 0
            while true {
                let childCount = node.children[index].count
                if rank < childCount { break }
                rank -= childCount
                if rank == 0 { return node.entries[index] }
                rank -= 1
                index += 1
            }
            node = node.children[index]
        }
    }

    @inlinable
    func rank(where compare: (Key) -> Int) -> Int {
        var node = self
        var rank = 0
        while true {
            var low = 0, high = node.entries.count
            while low < high {
                let mid = (low + high) >> 1
                if compare(node.entries[mid].key) < 0 { low = mid + 1 } else { high = mid }
            }
            if node.isLeaf { return rank + low }
            for i in 0..<low { rank += node.children[i].count + 1 }
            if low < node.entries.count, compare(node.entries[low].key) == 0 {
                return rank + node.children[low].count
            }
            node = node.children[low]
        }
    }

    /// In-order visit starting at `rank`; returns false when `body` asked to stop.
    @inlinable
    func visit(fromRank rank: Int, _ body: (Key, Value) throws -> Bool) rethrows -> Bool {
        if isLeaf {
            var i = rank
            while i < entries.count {
                if try !body(entries[i].key, entries[i].value) { return false }
                i += 1
            }
            return true
        }
        var rank = rank
        var index = 0
        while index < children.count {
            let childCount = children[index].count
            if rank < childCount {
                if try !children[index].visit(fromRank: rank, body) { return false }
                rank = 0
            } else {
                rank -= childCount
            }
            if index < entries.count {
                if rank == 0 {
                    if try !body(entries[index].key, entries[index].value) { return false }
                } else {
                    rank -= 1
                }
            }
            index += 1
        }
        return true
    }

    /// Reverse in-order visit starting at `rank` (inclusive) going down; false when `body` stopped.
    @inlinable
    func visitReversed(fromRank rank: Int, _ body: (Key, Value) throws -> Bool) rethrows -> Bool {
        if isLeaf {
            var i = rank
            while i >= 0 {
                if try !body(entries[i].key, entries[i].value) { return false }
                i -= 1
            }
            return true
        }
        // Find whether `rank` lies inside child `index` or is the entry just after it.
        var before = 0
        var index = 0
        var startsInChild = false
        while true {
            let childCount = children[index].count
            if rank < before + childCount { startsInChild = true; break }
            if rank == before + childCount { break }
            before += childCount + 1
            index += 1
        }
        var position = index
        if startsInChild {
            if try !children[index].visitReversed(fromRank: rank - before, body) { return false }
            position = index - 1
        }
        while position >= 0 {
            if try !body(entries[position].key, entries[position].value) { return false }
            let child = children[position]
            if try !child.visitReversed(fromRank: child.count - 1, body) { return false }
            position -= 1
        }
        return true
    }

    // MARK: Bulk building

    /// Elements a tree of `height` can hold at most (height 0 is a leaf).
    @usableFromInline
    static func capacity(height: Int) -> Int {
        var capacity = maxEntries
        for _ in 0..<height { capacity = (maxEntries + 1) * capacity + maxEntries }
        return capacity
    }

    @usableFromInline
    static func build(_ elements: ArraySlice<Element>) -> SortedMapNode {
        var height = 0
        while capacity(height: height) < elements.count { height += 1 }
        return build(elements, height: height)
    }

    /// Builds a subtree of exactly `height` whose children share the elements evenly, so every
    /// leaf sits at the same depth.
    @usableFromInline
    static func build(_ elements: ArraySlice<Element>, height: Int) -> SortedMapNode {
        if height == 0 { return SortedMapNode(entries: ContiguousArray(elements), children: [], count: elements.count) }
        let n = elements.count
        let childCapacity = capacity(height: height - 1)
        let childCount = max(2, (n + 1 + childCapacity) / (childCapacity + 1))
        let inChildren = n - (childCount - 1)
        var entries = ContiguousArray<Element>()
        var children = ContiguousArray<SortedMapNode>()
        entries.reserveCapacity(childCount - 1)
        children.reserveCapacity(childCount)
        var start = elements.startIndex
        for i in 0..<childCount {
            let size = inChildren / childCount + (i < inChildren % childCount ? 1 : 0)
            children.append(build(elements[start..<(start + size)], height: height - 1))
            start += size
            if i < childCount - 1 {
                entries.append(elements[start])
                start += 1
            }
        }
        return SortedMapNode(entries: entries, children: children, count: n)
    }

    /// An array that takes over `count` elements from `source`, leaving it uninitialized.
    ///
    /// Small arrays use `reserveCapacity` and `append`: `init(unsafeUninitializedCapacity:)`
    /// allocates through the standard library's unspecialized `_allocateBufferUninitialized`,
    /// which looks up the array storage's generic metadata on every call (≈ 290 instructions, 3%
    /// of a parse under callgrind), while the specialized path caches it. From
    /// `moveArrayInOneCopyCountMin` elements on, its single bulk move pays for the lookup.
    @inlinable
    static func moveArray(from source: UnsafeMutablePointer<Element>, count: Int) -> ContiguousArray<Element> {
        if count >= moveArrayInOneCopyCountMin {
            return ContiguousArray(unsafeUninitializedCapacity: count) { buffer, initialized in
                buffer.baseAddress!.moveInitialize(from: source, count: count)
                initialized = count
            }
        }
        var array = ContiguousArray<Element>()
        array.reserveCapacity(count)
        for i in 0..<count { array.append((source + i).move()) }
        return array
    }

    @usableFromInline static var moveArrayInOneCopyCountMin: Int { 20 }

    /// `build(_:)`, moving the elements out of `source` instead of copying them.
    @inlinable
    static func build(moving source: UnsafeMutablePointer<Element>, count: Int) -> SortedMapNode {
        var height = 0
        while capacity(height: height) < count { height += 1 }
        return build(moving: source, count: count, height: height)
    }

    /// `build(_:height:)`, moving the elements out of `source`; same shape.
    @inlinable
    static func build(moving source: UnsafeMutablePointer<Element>, count n: Int, height: Int) -> SortedMapNode {
        if height == 0 { return SortedMapNode(entries: moveArray(from: source, count: n), children: [], count: n) }
        let childCapacity = capacity(height: height - 1)
        let childCount = max(2, (n + 1 + childCapacity) / (childCapacity + 1))
        let inChildren = n - (childCount - 1)
        var entries = ContiguousArray<Element>()
        var children = ContiguousArray<SortedMapNode>()
        entries.reserveCapacity(childCount - 1)
        children.reserveCapacity(childCount)
        var start = 0
        for i in 0..<childCount {
            let size = inChildren / childCount + (i < inChildren % childCount ? 1 : 0)
            children.append(build(moving: source + start, count: size, height: height - 1))
            start += size
            if i < childCount - 1 {
                entries.append((source + start).move())
                start += 1
            }
        }
        return SortedMapNode(entries: entries, children: children, count: n)
    }

    /// Checks order, counts and uniform leaf depth; returns the subtree height. (Tests and
    /// `HEARTH_INTERNAL_CHECKS` builds call it; it is never on a hot path.)
    func checkInvariants(isRoot: Bool = true) -> Int {
        precondition(entries.count <= Self.maxEntries, "node overflow")
        precondition(isRoot || !entries.isEmpty, "empty non-root node")
        for i in 1..<max(1, entries.count) { precondition(entries[i - 1].key < entries[i].key, "entries out of order") }
        if isLeaf {
            precondition(count == entries.count, "leaf count mismatch")
            return 0
        }
        precondition(children.count == entries.count + 1, "children/entries mismatch")
        var total = entries.count
        var height = -1
        for (i, child) in children.enumerated() {
            let h = child.checkInvariants(isRoot: false)
            precondition(height == -1 || height == h, "leaves at different depths")
            height = h
            total += child.count
            if i < entries.count { precondition(child.entries.last!.key < entries[i].key, "child above separator") }
            if i > 0 { precondition(entries[i - 1].key < child.entries.first!.key, "child below separator") }
        }
        precondition(total == count, "count mismatch")
        return height + 1
    }
}

extension SortedMap {
    /// Verifies the map's invariants (debug and internal-check builds only).
    package func checkInvariants() {
        switch storage {
        case nil: break
        case .small(let entries)?:
            precondition(!entries.isEmpty && entries.count <= Self.smallCountMax, "small map size")
            for i in 1..<entries.count { precondition(Key.compare(entries[i - 1].key, entries[i].key) < 0, "small map order") }
        case .tree(let node)?: _ = node.checkInvariants()
        }
    }
}

/// A total order that answers in one comparison what `<` and `==` answer in two: the B-tree's
/// searches compare keys whose comparison is not cheap (Firebase key order parses integers).
public protocol ThreeWayComparable: Comparable {
    /// Negative when `lhs` orders first, zero when equal, positive when `rhs` orders first.
    static func compare(_ lhs: Self, _ rhs: Self) -> Int
}

extension ThreeWayComparable {
    @inlinable
    public static func compare(_ lhs: Self, _ rhs: Self) -> Int { lhs < rhs ? -1 : (lhs == rhs ? 0 : 1) }
}

extension Int: ThreeWayComparable {}
