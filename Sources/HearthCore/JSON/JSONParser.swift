/// A one-pass JSON reader that builds `Node`s straight from UTF-8 bytes, with no intermediate
/// dictionaries or `Any` values.
///
/// Decisions, where RFC 8259 leaves room or Firebase differs:
/// * Duplicate keys: the last one wins, as in JavaScript's `JSON.parse`, which is what the
///   Firebase SDKs see. Keys are compared byte for byte, so NFC and NFD spellings are different keys
///   (Firebase compares UTF-16 code units and never normalizes).
/// * `\u` escapes that leave a lone surrogate (`"\uD800"`, `"\uDC00x"`) are rejected: a Swift
///   `String` cannot hold one, and replacing it with U+FFFD would silently change the data.
/// * Invalid UTF-8 anywhere is rejected with the offset of the first bad byte.
/// * Integer literals that fit `Int64` stay exact; every other number is read as binary64 with
///   correct rounding (the standard library's conversion) and must be finite: `1e400` is an error,
///   since JSON has no infinity, while `1e-400` underflows to 0 as in JavaScript.
/// * Nesting deeper than `Limits.jsonNestingDepthMax` is an error, so hostile input cannot
///   exhaust the stack.
/// * Keys longer than 15 UTF-8 bytes, and string values of 16–48 bytes, are interned for the
///   length of one parse: Swift keeps shorter strings inline, but each longer one is a heap
///   allocation, and in Firebase data the same uid is typically a key in thousands of maps (votes,
///   members, likes) and a value in thousands of records (author, uid).
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    let validating: Bool
    /// For `.write(at:)`: keys from the root to the value being read, for error messages only.
    var pathKeys: [ChildKey] = []
    /// Children of every object or array being read, innermost last; one buffer for the whole
    /// parse so objects do not allocate their own.
    let pending = PendingChildren()
    /// Decoded bytes of a string with escapes.
    let unescaped = JSONByteBuffer()
    let interner = JSONKeyInterner()
    /// What the parse dropped before it finished (children overridden by a later duplicate or
    /// with empty values, replaced `.value` and `.priority` values, priorities of objects left
    /// empty and of `.value`s given another): they may hold strings the
    /// interner lent, so they are destroyed with the parser, after it settled, instead of at
    /// once. Settling at each drop instead (290 empty objects in the benchmark document) took back
    /// most of what lending saves: each settle touches every string lent since the last.
    var droppedKeys: [ChildKey] = []
    var droppedValues: [Node] = []
    var shortStrings: JSONShortStringCache
    let sorter = JSONChildSorter()

    init(bytes: UnsafeRawBufferPointer, options: JSONParseOptions) {
        if let base = bytes.baseAddress {
            // Any initialized memory can be read as bytes.
            self.bytes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        } else {
            self.bytes = UnsafeBufferPointer(start: nil, count: 0)
        }
        shortStrings = JSONShortStringCache(enabled: bytes.count >= JSONShortStringCache.documentBytesMin)
        switch options.validation {
        case .none:
            validating = false
        case .write(let path):
            validating = true
            pathKeys = path.keys
        }
    }

    // MARK: - Document

    mutating func parseDocument() throws(DataError) -> Node {
        var depth = 0, pathBytes = 0
        if validating {
            let base = Path(pathKeys)
            try KeyValidation.validate(writePath: base)
            depth = base.count
            for key in base.keys { pathBytes += key.string.utf8.count + 1 }
        }
        let node = try parseValue(nesting: 0, depth: depth, pathBytes: pathBytes)
        skipWhitespace()
        if index < bytes.count { throw syntaxError("expected end of input after the value") }
        // The tree leaves the parser holding a reference for each of its strings.
        interner.settle()
        return node
    }

    // MARK: - Errors

    func syntaxError(_ expected: String, at offset: Int? = nil) -> DataError {
        let offset = offset ?? index
        let found = offset < bytes.count ? "" : " (found end of input)"
        return failure(DataError(.invalidJSON, "Invalid JSON at byte \(offset): \(expected)\(found)", byteOffset: offset))
    }

    /// Every error the parser throws passes through here, so the interner's lent strings are
    /// paid for before the throw unwinds the unfinished values that hold them
    /// (`JSONKeyInterner.settle()`).
    func failure(_ error: DataError) -> DataError {
        interner.settle()
        return error
    }

    var currentPath: Path { Path(pathKeys) }

    // MARK: - Values

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Reads one value. `nesting` counts enclosing arrays and objects; `depth` and `pathBytes`
    /// measure the Firebase location the value is written to (they only matter when validating).
    mutating func parseValue(nesting: Int, depth: Int, pathBytes: Int) throws(DataError) -> Node {
        skipWhitespace()
        guard index < bytes.count else { throw syntaxError("expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return try parseObject(nesting: nesting + 1, depth: depth, pathBytes: pathBytes)
        case UInt8(ascii: "["):
            return try parseArray(nesting: nesting + 1, depth: depth, pathBytes: pathBytes)
        case UInt8(ascii: "\""):
            let start = index
            let string = try parseString()
            if validating && string.utf8.count > Limits.stringLengthBytesMax {
                throw failure(DataError(
                    .stringTooLong,
                    "String at '\(currentPath.slashed)' (byte \(start)) is \(string.utf8.count) bytes; the limit is \(Limits.stringLengthBytesMax)."))
            }
            return Node(string)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return Node(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return Node(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .empty
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw syntaxError("expected a value (object, array, string, number, true, false or null)")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(DataError) {
        // One 4-byte comparison for `true` and `null` (and the tail of `false`): the byte loop was
        // 1.7% of a parse, where `"uid": true` maps hold most of the leaves.
        let count = literal.utf8CodeUnitCount
        if index + count <= bytes.count, let base = bytes.baseAddress {
            let tail = UnsafeRawPointer(base + index + count - 4).loadUnaligned(as: UInt32.self)
            let expected = UnsafeRawPointer(literal.utf8Start + count - 4).loadUnaligned(as: UInt32.self)
            if tail == expected && (count == 4 || bytes[index] == literal.utf8Start[0]) {
                index += count
                return
            }
        }
        try expectLiteralSlowly(literal)
    }

    /// Reports the first byte that differs.
    mutating func expectLiteralSlowly(_ literal: StaticString) throws(DataError) {
        let count = literal.utf8CodeUnitCount
        let start = literal.utf8Start
        for offset in 0..<count {
            guard index + offset < bytes.count, bytes[index + offset] == start[offset] else {
                throw syntaxError("expected '\(literal)'", at: index + offset)
            }
        }
        index += count
    }

    // MARK: - Objects

    mutating func parseObject(nesting: Int, depth: Int, pathBytes: Int) throws(DataError) -> Node {
        if nesting > Limits.jsonNestingDepthMax {
            throw syntaxError("nesting deeper than \(Limits.jsonNestingDepthMax) levels")
        }
        index += 1  // {
        let start = pending.count
        var priority: Priority?
        /// A `.priority` whose value is a server-value placeholder: kept as an ordinary child for
        /// the resolver.
        var priorityPlaceholder: Node?
        var dotValue: Node?
        var hasServerValue = false
        var ordinaryKeyCount = 0
        var firstKeyOffset = 0

        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .empty
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw syntaxError("expected a string key")
            }
            let keyOffset = index
            if firstKeyOffset == 0 { firstKeyOffset = keyOffset }
            // The key is moved, never copied, into `pending`: a copy was a retain and a release
            // per key (3% of a parse under callgrind).
            let parsed = try parseKey()
            let keyBytes = parsed.byteCount
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw syntaxError("expected ':' after the key")
            }
            index += 1

            var handled = false
            if parsed.startsWithDot {
                switch parsed.key.string {
                case ".priority":
                    let valueOffset = index
                    let value = try parseValue(nesting: nesting, depth: depth, pathBytes: pathBytes)
                    // A replaced placeholder or priority is dropped (see `droppedValues`): either
                    // may hold a string the interner lent.
                    if let replaced = priorityPlaceholder.take() { droppedValues.append(replaced) }
                    if let replaced = priority.take() { droppedValues.append(replaced.node) }
                    if value.isEmpty {
                        priority = nil
                    } else if let leaf = Priority(value), value.priority == nil {
                        priority = leaf
                    } else if value.isServerValuePlaceholder {
                        priority = nil
                        priorityPlaceholder = value
                    } else {
                        throw failure(DataError(
                            .invalidPriority,
                            "Invalid priority at '\(currentPath.slashed)' (byte \(valueOffset)): a priority must be a number, a string or null."))
                    }
                    handled = true
                case ".value":
                    if let replaced = dotValue.take() { droppedValues.append(replaced) }
                    dotValue = try parseValue(nesting: nesting, depth: depth, pathBytes: pathBytes)
                    handled = true
                case ".sv":
                    hasServerValue = true
                    let value = try parseValue(nesting: nesting, depth: depth, pathBytes: pathBytes)
                    if !value.isEmpty {
                        let order = parsed.order
                        pending.append(parsed.takeKey(), value, order: order)
                    }
                    handled = true
                default:
                    if validating {
                        throw failure(DataError(
                            .invalidKey,
                            "Invalid key '\(parsed.key.string)' in path '\(currentPath.appending(parsed.key).slashed)': keys must not start with '.' (only .priority, .value and .sv are allowed)."))
                    }
                    handled = false
                }
            }

            if !handled {
                ordinaryKeyCount += 1
                let childBytes = pathBytes + keyBytes + 1
                if validating {
                    try validateChild(parsed.key, keyBytes: keyBytes, depth: depth + 1, pathBytes: childBytes)
                    pathKeys.append(parsed.key)
                }
                let value = try parseValue(nesting: nesting, depth: depth + 1, pathBytes: childBytes)
                if validating { pathKeys.removeLast() }
                // Kept even when empty, so a later `"a": null` still overrides an earlier `"a"`;
                // `makeNode` drops empty children.
                let order = parsed.order
                pending.append(parsed.takeKey(), value, order: order)
            }

            skipWhitespace()
            guard index < bytes.count else { throw syntaxError("expected ',' or '}'") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: ",") { continue }
            if byte == UInt8(ascii: "}") { break }
            throw syntaxError("expected ',' or '}'", at: index - 1)
        }

        if let dotValue {
            // docs/protocol.md §5.1: `.value` stands for the whole node; the clients reject it next to
            // ordinary keys because one of the two would have to be dropped.
            if ordinaryKeyCount > 0 || hasServerValue || priorityPlaceholder != nil {
                // `failure` settles before the children, which may hold lent strings, are destroyed.
                let error = failure(DataError(
                    .invalidData,
                    "Invalid data at '\(currentPath.slashed)' (byte \(firstKeyOffset)): '.value' must not be mixed with other keys."))
                pending.removeLast(pending.count - start)
                throw error
            }
            // `withPriority` drops the value's own priority, and drops `priority` from an empty
            // value: kept until the parser is destroyed, like every other dropped string.
            if dotValue.priority != nil { droppedValues.append(dotValue) }
            if dotValue.isEmpty, let priority { droppedValues.append(priority.node) }
            return dotValue.withPriority(priority)
        }
        if hasServerValue && validating && (ordinaryKeyCount > 0 || priority != nil || priorityPlaceholder != nil) {
            throw failure(DataError(
                .invalidServerValue,
                "Invalid server value at '\(currentPath.slashed)' (byte \(firstKeyOffset)): '.sv' must be the only key."))
        }
        if let priorityPlaceholder {
            pending.append(.priorityKey, priorityPlaceholder, order: Self.order(of: ChildKey.priorityKey.string))
        }
        let node = makeNode(from: start)
        guard let priority else { return node }
        // An object left without children drops its priority.
        if node.isEmpty { droppedValues.append(priority.node) }
        return node.withPriority(priority)
    }

    /// Checks a key and the location it leads to against Firebase's write rules.
    func validateChild(_ key: ChildKey, keyBytes: Int, depth: Int, pathBytes: Int) throws(DataError) {
        var valid = keyBytes > 0 && keyBytes <= Limits.keyLengthBytesMax
        if valid {
            for byte in key.string.utf8 where KeyValidation.isForbidden(byte) {
                valid = false
                break
            }
        }
        let path = currentPath.appending(key)
        do {
            if !valid { try KeyValidation.validate(key, in: path) }
            if depth > Limits.pathDepthMax || pathBytes > Limits.pathLengthBytesMax {
                try KeyValidation.validateLength(of: path)
            }
        } catch {
            throw failure(error)
        }
    }

    // MARK: - Arrays

    mutating func parseArray(nesting: Int, depth: Int, pathBytes: Int) throws(DataError) -> Node {
        if nesting > Limits.jsonNestingDepthMax {
            throw syntaxError("nesting deeper than \(Limits.jsonNestingDepthMax) levels")
        }
        index += 1  // [
        let start = pending.count
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .empty
        }
        var position = 0
        while true {
            var childBytes = pathBytes + 2
            var key: ChildKey?
            if validating {
                let name = ChildKey(String(position))
                childBytes = pathBytes + name.string.utf8.count + 1
                try validateChild(name, keyBytes: name.string.utf8.count, depth: depth + 1, pathBytes: childBytes)
                pathKeys.append(name)
                key = name
            }
            let value = try parseValue(nesting: nesting, depth: depth + 1, pathBytes: childBytes)
            if validating { pathKeys.removeLast() }
            // docs/protocol.md §5.1: arrays are objects keyed by index, with null elements skipped.
            if !value.isEmpty {
                let name = key ?? ChildKey(String(position))
                let order =
                    Limits.integerKeyRange.contains(Int64(position))
                    ? Self.integerOrder(Int64(position)) : Self.order(of: name.string)
                pending.append(name, value, order: order)
            }
            position += 1
            skipWhitespace()
            guard index < bytes.count else { throw syntaxError("expected ',' or ']'") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: ",") { continue }
            if byte == UInt8(ascii: "]") { break }
            throw syntaxError("expected ',' or ']'", at: index - 1)
        }
        return makeNode(from: start)
    }

    // MARK: - Building children

    /// The children read but not yet placed in their map, innermost object last, each with its
    /// sort order (`order(of:)`).
    ///
    /// Manually managed rather than a `ContiguousArray` of structs: a finished object's children
    /// are moved (bitwise, no retain or release) straight into the map's own array, and the
    /// order words sit apart so sorting never touches the reference-counted keys and values.
    /// Moving instead of copying removed the retain/release pair per child that, with the
    /// `PendingChild` initializer, took 13% of a parse under callgrind.
    final class PendingChildren {
        /// The map's own entry type, so finished children move into its array in one copy.
        typealias Element = SortedMapEntry<ChildKey, Node>

        private(set) var elements: UnsafeMutablePointer<Element>
        private(set) var orders: UnsafeMutablePointer<UInt64>
        private(set) var count = 0
        private var capacity = 256

        init() {
            elements = .allocate(capacity: capacity)
            orders = .allocate(capacity: capacity)
        }

        deinit {
            // Children of the objects a thrown error left unfinished.
            elements.deinitialize(count: count)
            elements.deallocate()
            orders.deallocate()
        }

        @inline(__always)
        func append(_ key: consuming ChildKey, _ value: consuming Node, order: UInt64) {
            if count == capacity { grow() }
            (elements + count).initialize(to: Element(key: key, value: value))
            orders[count] = order
            count += 1
        }

        /// Destroys the last `n` children.
        func removeLast(_ n: Int) {
            count -= n
            (elements + count).deinitialize(count: n)
        }

        /// Room for `n` elements after the last child, valid (as are `elements` and `orders`)
        /// until the next `append` or `reserve`.
        func reserve(_ n: Int) -> UnsafeMutablePointer<Element> {
            while count + n > capacity { grow() }
            return elements + count
        }

        /// Forgets the children from `start` on, which the caller has moved out or destroyed.
        @inline(__always)
        func forget(from start: Int) { count = start }

        private func grow() {
            let newElements = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
            let newOrders = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity * 2)
            newElements.moveInitialize(from: elements, count: count)
            newOrders.initialize(from: orders, count: count)
            elements.deallocate()
            orders.deallocate()
            elements = newElements
            orders = newOrders
            capacity *= 2
        }
    }

    /// See `KeyOrder.orderWord(ofUTF8:)`.
    ///
    /// Inline for the common key of 2 or more bytes whose first seven are ASCII and that cannot be
    /// an integer key (its second byte is not a digit): the word is then those bytes, one load
    /// (`canLoadWord`: 8 bytes can be read at the key's start even when it is shorter). Calling
    /// `orderWord` for every key was 4% of a parse under callgrind.
    @inline(__always)
    static func order(ofKey raw: UnsafeBufferPointer<UInt8>, canLoadWord: Bool = false) -> UInt64 {
        let count = raw.count
        if count >= 2 && (count >= 8 || canLoadWord), let base = raw.baseAddress {
            var word = UInt64(bigEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self))
            // Bytes past the key read as the zero padding `orderWord` uses.
            if count < 8 { word &= ~(UInt64.max >> UInt64(8 * count)) }
            let second = UInt8(truncatingIfNeeded: word >> 48)
            if (second &- UInt8(ascii: "0")) >= 10 && word & 0x8080_8080_8080_8000 == 0 {
                return (1 << 63) | (word >> 8)
            }
        }
        return KeyOrder.orderWord(ofUTF8: raw)
    }

    static func order(of key: String) -> UInt64 { KeyOrder.orderWord(of: key) }

    @inline(__always)
    static func integerOrder(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: value &+ 0x8000_0000)
    }

    /// Turns the pending children from `start` on into a node and pops them. Input from Firebase
    /// (exports, SDK writes) is usually in key order already, so the common case is one check and
    /// an O(n) move.
    mutating func makeNode(from start: Int) -> Node {
        let end = pending.count
        if start == end { return .empty }
        // The unsorted path needs room for a sorted copy; making it first keeps these pointers valid.
        let sortedElements = pending.reserve(end - start)
        let elements = pending.elements, orders = pending.orders
        var sorted = !elements[start].value.isEmpty
        var i = start + 1
        while sorted && i < end {
            if elements[i].value.isEmpty {
                sorted = false
            } else if orders[i - 1] >= orders[i] {
                sorted = orders[i - 1] == orders[i] && ChildKey.compare(elements[i - 1].key, elements[i].key) < 0
            }
            i += 1
        }
        if sorted {
            // Sorted with no duplicates and no empty values: move them all.
            let map = ChildrenMap(movingSortedUniqueEntries: elements + start, count: end - start)
            pending.forget(from: start)
            return Node(children: map)
        }
        // Sort order words and positions, not the children. The sort is stable, so equal keys
        // keep their input order; keep the last of each run and drop empty values.
        let sortKeys = sorter.sort(orders: orders, elements: elements, positions: start..<end)
        // Move the survivors, in order, to the free space after `end`, then into the map.
        var kept = 0
        for n in sortKeys.indices {
            let position = sortKeys[n].position
            let duplicate =
                n + 1 < sortKeys.count && sortKeys[n].order == sortKeys[n + 1].order
                && elements[position].key == elements[sortKeys[n + 1].position].key
            if duplicate || elements[position].value.isEmpty {
                // Never looked at again: duplicates compare with the next key, not this one.
                let dropped = (elements + position).move()
                droppedKeys.append(dropped.key)
                if !dropped.value.isEmpty { droppedValues.append(dropped.value) }
                continue
            }
            (sortedElements + kept).moveInitialize(from: elements + position, count: 1)
            kept += 1
        }
        let map = ChildrenMap(movingSortedUniqueEntries: sortedElements, count: kept)
        pending.forget(from: start)
        return Node(children: map)
    }

    // MARK: - Strings

    /// An object key with what the object loop needs to know about it.
    struct ParsedKey {
        var key: ChildKey
        /// See `order(ofKey:)`.
        var order: UInt64
        /// UTF-8 length.
        var byteCount: Int
        var startsWithDot: Bool

        /// Ends the parsed key, moving its key out: no retain and release, as a copy would cost,
        /// and no placeholder left to release either.
        @inline(__always)
        consuming func takeKey() -> ChildKey { key }
    }

    /// Reads an object key starting at the opening quote.
    mutating func parseKey() throws(DataError) -> ParsedKey {
        let start = index + 1
        let (end, ascii) = scanString(from: start)
        if end < bytes.count && bytes[end] == UInt8(ascii: "\"") {
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<end])
            let string: String
            if raw.count > JSONKeyInterner.inlineLengthMax && !Self.looksLikePushID(raw) {
                let (known, probe) = interner.find(raw)
                if let known {
                    string = known
                } else {
                    string = try makeString(raw, ascii: ascii, offset: start)
                    interner.insert(string, at: probe)
                }
            } else {
                string = try makeShortString(raw, ascii: ascii, offset: start)
            }
            index = end + 1
            let order = Self.order(ofKey: raw, canLoadWord: start + 8 <= bytes.count)
            return ParsedKey(
                key: ChildKey(string, order: order), order: order, byteCount: raw.count,
                startsWithDot: raw.first == UInt8(ascii: "."))
        }
        // Escapes (or an error, which `parseString` reports): look at the decoded bytes.
        var string = try parseString()
        let (order, first) = string.withUTF8 { (Self.order(ofKey: $0), $0.first) }
        return ParsedKey(
            key: ChildKey(string, order: order), order: order, byteCount: string.utf8.count,
            startsWithDot: first == UInt8(ascii: "."))
    }

    /// True for a key shaped like a Firebase push ID (20 characters starting with `-`, docs/protocol.md
    /// §5.8). Push IDs are unique by construction (a timestamp and 72 random bits), so interning them
    /// never finds a match; skipping the table saves the hash and the insert for every message and
    /// post key.
    @inline(__always)
    static func looksLikePushID(_ raw: UnsafeBufferPointer<UInt8>) -> Bool {
        raw.count == 20 && raw[0] == UInt8(ascii: "-")
    }

    /// Offset of the first `"`, `\` or control byte at or after `start` (or the end of input),
    /// and whether every byte before it is ASCII.
    ///
    /// Sixteen bytes at a time with SIMD compares (SSE2 on x86-64: three compares and a mask test
    /// per 16 bytes), then eight at a time for the tail: a byte-at-a-time loop was 8% of a parse
    /// under callgrind, and the 8-byte loop alone 5%. Knowing a string is ASCII lets `makeString`
    /// skip UTF-8 validation. In the 8-byte loop each mask flags the first matching byte exactly
    /// (later flags may be borrow artifacts), so the lowest flag of their union is the first byte
    /// that ends the run.
    @inline(__always)
    func scanString(from start: Int) -> (end: Int, ascii: Bool) {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        var i = start
        var high: UInt64 = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            var highVector = SIMD16<UInt8>(repeating: 0)
            let quote = SIMD16<UInt8>(repeating: 0x22), backslash = SIMD16<UInt8>(repeating: 0x5C)
            let space = SIMD16<UInt8>(repeating: 0x20)
            while i &+ 16 <= bytes.count {
                let vector = raw.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
                let stops = (vector .== quote) .| (vector .== backslash) .| (vector .< space)
                // `any(_:)` is not inlined on Linux (an out-of-line reduction call); the mask as
                // two words is one compare.
                let stopLanes = unsafeBitCast(stops, to: SIMD2<UInt64>.self)
                if stopLanes[0] | stopLanes[1] != 0 {
                    // As little-endian words, the first byte in memory is the lowest of the first.
                    let stopWords = (UInt64(littleEndian: stopLanes[0]), UInt64(littleEndian: stopLanes[1]))
                    let lanes = unsafeBitCast(vector, to: SIMD2<UInt64>.self)
                    let words = (UInt64(littleEndian: lanes[0]), UInt64(littleEndian: lanes[1]))
                    let seen = unsafeBitCast(highVector, to: SIMD2<UInt64>.self)
                    high = seen[0] | seen[1]
                    let stop: Int
                    if stopWords.0 != 0 {
                        stop = stopWords.0.trailingZeroBitCount >> 3
                        high |= words.0 & Self.lowBytes(stop)
                    } else {
                        stop = 8 + stopWords.1.trailingZeroBitCount >> 3
                        high |= words.0 | (words.1 & Self.lowBytes(stop - 8))
                    }
                    return (i + stop, high & highs == 0)
                }
                highVector |= vector
                i &+= 16
            }
            let seen = unsafeBitCast(highVector, to: SIMD2<UInt64>.self)
            high = seen[0] | seen[1]
            while i + 8 <= bytes.count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let quote = word ^ (0x22 &* ones), backslash = word ^ (0x5C &* ones)
                let hits =
                    ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | (word &- 0x20 &* ones) & ~word)
                    & highs
                if hits != 0 {
                    let stop = hits.trailingZeroBitCount >> 3
                    // Bytes below `stop` (little-endian: the first in memory).
                    high |= word & Self.lowBytes(stop)
                    return (i + stop, high & highs == 0)
                }
                high |= word
                i += 8
            }
        }
        var ascii = high & highs == 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            if byte >= 0x80 { ascii = false }
            i += 1
        }
        return (i, ascii)
    }

    /// A mask of the lowest `count` bytes of a word (`count` in 0...7).
    @inline(__always)
    static func lowBytes(_ count: Int) -> UInt64 {
        count == 0 ? 0 : ~0 >> UInt64(64 - 8 * count)
    }

    /// Reads a string starting at the opening quote.
    mutating func parseString() throws(DataError) -> String {
        let start = index + 1
        // Fast path: most strings have no escapes and can be validated and copied in one go.
        let (end, ascii) = scanString(from: start)
        guard end < bytes.count else { throw syntaxError("expected '\"' to close the string", at: end) }
        if bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<end])
            // Short values repeat too (a uid as "author", "uid", "owner"), so they share the key
            // table; long ones are mostly prose and would only fill it.
            if raw.count > JSONKeyInterner.inlineLengthMax && raw.count <= JSONKeyInterner.valueLengthMax {
                let (known, probe) = interner.find(raw)
                if let known { return known }
                let string = try makeString(raw, ascii: ascii, offset: start)
                interner.insert(string, at: probe)
                return string
            }
            return try makeShortString(raw, ascii: ascii, offset: start)
        }
        if bytes[end] < 0x20 {
            throw syntaxError("expected '\"' to close the string; control characters must be escaped", at: end)
        }
        return try parseEscapedString(from: start, firstEscape: end, ascii: ascii)
    }

    /// `ascii` tells whether the bytes before `firstEscape` are.
    mutating func parseEscapedString(from start: Int, firstEscape: Int, ascii: Bool) throws(DataError) -> String {
        unescaped.removeAll()
        var unescapedASCII = ascii
        // Raw runs are validated as UTF-8 before copying so errors report input offsets.
        try appendRaw(start..<firstEscape, ascii: ascii)
        var i = firstEscape
        while true {
            guard i < bytes.count else { throw syntaxError("expected '\"' to close the string", at: i) }
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                index = i + 1
                // Raw runs were validated and escapes encode whole scalars (no lone surrogates).
                return Self.stringFromValidUTF8(unescaped.bytes, ascii: unescapedASCII)
            }
            if byte < 0x20 {
                throw syntaxError("expected '\"' to close the string; control characters must be escaped", at: i)
            }
            if byte != UInt8(ascii: "\\") {
                let (runEnd, ascii) = scanString(from: i)
                try appendRaw(i..<runEnd, ascii: ascii)
                unescapedASCII = unescapedASCII && ascii
                i = runEnd
                continue
            }
            guard i + 1 < bytes.count else { throw syntaxError("expected an escape character", at: i + 1) }
            let escape = bytes[i + 1]
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escape)
            case UInt8(ascii: "b"): unescaped.append(0x08)
            case UInt8(ascii: "f"): unescaped.append(0x0C)
            case UInt8(ascii: "n"): unescaped.append(0x0A)
            case UInt8(ascii: "r"): unescaped.append(0x0D)
            case UInt8(ascii: "t"): unescaped.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hexQuad(at: i + 2)
                i += 6
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw syntaxError("expected a high surrogate to be followed by '\\u' and a low surrogate (lone surrogates are rejected)", at: i - 6)
                    }
                    let low = try hexQuad(at: i + 2)
                    guard (0xDC00..<0xE000).contains(low) else {
                        throw syntaxError("expected a low surrogate (DC00–DFFF) after a high surrogate (lone surrogates are rejected)", at: i - 6)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw syntaxError("expected a high surrogate before a low surrogate (lone surrogates are rejected)", at: i - 6)
                }
                if scalar >= 0x80 { unescapedASCII = false }
                appendUTF8(scalar)
                continue
            default:
                throw syntaxError("expected an escape character (\" \\ / b f n r t u)", at: i + 1)
            }
            i += 2
        }
    }

    mutating func appendRaw(_ range: Range<Int>, ascii: Bool) throws(DataError) {
        let raw = UnsafeBufferPointer(rebasing: bytes[range])
        if !ascii, let bad = JSONParser.firstInvalidUTF8(raw) {
            throw syntaxError("expected valid UTF-8", at: range.lowerBound + bad)
        }
        unescaped.append(contentsOf: raw)
    }

    func hexQuad(at offset: Int) throws(DataError) -> UInt32 {
        var value: UInt32 = 0
        for i in offset..<(offset + 4) {
            guard i < bytes.count else { throw syntaxError("expected 4 hex digits after '\\u'", at: i) }
            let byte = bytes[i]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw syntaxError("expected 4 hex digits after '\\u'", at: i)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            unescaped.append(UInt8(scalar))
        case 0x80..<0x800:
            unescaped.append(UInt8(0xC0 | scalar >> 6))
            unescaped.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            unescaped.append(UInt8(0xE0 | scalar >> 12))
            unescaped.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            unescaped.append(UInt8(0x80 | scalar & 0x3F))
        default:
            unescaped.append(UInt8(0xF0 | scalar >> 18))
            unescaped.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            unescaped.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            unescaped.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// `makeString` for strings of at most 15 bytes, through `shortStrings` when 16 bytes can
    /// be read at `raw`. Bytes that hit the cache equal bytes validated before.
    @inline(__always)
    mutating func makeShortString(_ raw: UnsafeBufferPointer<UInt8>, ascii: Bool, offset: Int) throws(DataError) -> String {
        guard raw.count <= JSONKeyInterner.inlineLengthMax, offset + 16 <= bytes.count, shortStrings.isEnabled else {
            return try makeString(raw, ascii: ascii, offset: offset)
        }
        let words = JSONShortStringCache.words(at: UnsafeRawPointer(raw.baseAddress!), count: raw.count)
        let slot = JSONShortStringCache.slot(words)
        if shortStrings.words[slot] == words { return shortStrings.strings[slot] }
        let string = try makeString(raw, ascii: ascii, offset: offset)
        shortStrings.words[slot] = words
        shortStrings.strings[slot] = string
        return string
    }

    /// A string from raw bytes, validated as UTF-8.
    ///
    /// `String(validating:as:)` would do this in one call, but on Linux it runs unspecialized
    /// generic code that looks up type metadata on every call (11% of a parse under callgrind).
    /// The bytes are validated here (with input offsets for errors) and then copied without a
    /// second validation (`stringFromValidUTF8`).
    /// `ascii` is what `scanString` found: ASCII needs no validation.
    @inline(__always)
    func makeString(_ raw: UnsafeBufferPointer<UInt8>, ascii: Bool, offset: Int) throws(DataError) -> String {
        if !ascii, let bad = JSONParser.firstInvalidUTF8(raw) {
            throw syntaxError("expected valid UTF-8", at: offset + bad)
        }
        return Self.stringFromValidUTF8(raw, ascii: ascii)
    }

    /// A string copied from bytes the parser has already checked to be well-formed UTF-8.
    ///
    /// `String(decoding:as:)` validates again (scalar by scalar for non-ASCII text, its
    /// `_fromUTF8Repairing` was 6% of a parse under callgrind) and scans ASCII text for its ASCII
    /// flag; `UTF8Span(unchecked:)` is the standard library's entry point for bytes known to be
    /// valid, and `String(copying:)` then only allocates and copies (or builds a small string).
    /// Passing bytes that are not valid UTF-8 here would break `String`'s invariants.
    /// (The entry points are new in Swift 6.2's standard library: on Linux always there; on the
    /// macOS versions the package still supports, the validating `String(decoding:as:)`.)
    @inline(__always)
    static func stringFromValidUTF8(_ raw: UnsafeBufferPointer<UInt8>, ascii: Bool) -> String {
        if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
            let span = unsafe Span(_unsafeElements: raw)
            return String(copying: unsafe UTF8Span(unchecked: span, isKnownASCII: ascii))
        }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
    /// forms, no surrogates, nothing above U+10FFFF), or nil. Only run on strings that are not
    /// all ASCII, which in chat text still have long ASCII runs: those are skipped up to 8 bytes
    /// at a time.
    static func firstInvalidUTF8(_ raw: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        while i < raw.count {
            if i + 8 <= raw.count {
                // Skip the ASCII bytes before the first high bit (little-endian: the lowest byte
                // is the first), all eight when there is none: stepping one byte at a time from a
                // word that merely contains a non-ASCII character was most of this function.
                let highBits = UInt64(littleEndian: UnsafeRawPointer(raw.baseAddress! + i).loadUnaligned(as: UInt64.self))
                    & 0x8080_8080_8080_8080
                if highBits == 0 {
                    i += 8
                    continue
                }
                i += highBits.trailingZeroBitCount >> 3
            }
            let lead = raw[i]
            if lead < 0x80 { i += 1; continue }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return i
            }
            for k in 1..<length {
                guard i + k < raw.count else { return i + k }
                let byte = raw[i + k]
                let (lo, hi) = k == 1 ? (low, high) : (0x80, 0xBF)
                if byte < lo || byte > hi { return i + k }
            }
            i += length
        }
        return nil
    }

    // MARK: - Numbers

    /// The value of eight ASCII digits loaded little-endian (the first digit in the lowest byte),
    /// combined pairwise in the word: digits to 2-digit values in alternate bytes, those to
    /// 4-digit values in alternate 16-bit lanes, then the two halves.
    @inline(__always)
    static func eightDigitsValue(_ word: UInt64) -> UInt64 {
        var v = word &- 0x3030_3030_3030_3030
        // Byte 2i: 10 × digit 2i + digit 2i+1 (≤ 99, so no carries between bytes).
        v = (v &* 10) &+ (v >> 8)
        v &= 0x00FF_00FF_00FF_00FF
        // 16-bit lane 2i: 100 × pair 2i + pair 2i+1 (≤ 9999).
        v = (v &* 100) &+ (v >> 16)
        v &= 0x0000_FFFF_0000_FFFF
        return (v & 0xFFFF) &* 10_000 &+ (v >> 32)
    }

    @inline(__always)
    func isDigit(at i: Int) -> Bool { i < bytes.count && (bytes[i] &- UInt8(ascii: "0")) < 10 }

    mutating func parseNumber() throws(DataError) -> Node {
        let start = index
        var i = index
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard isDigit(at: i) else { throw syntaxError("expected a digit", at: i) }
        let integerStart = i
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if isDigit(at: i) { throw syntaxError("expected no leading zeros", at: i) }
        } else {
            while isDigit(at: i) { i += 1 }
        }
        let integerEnd = i
        var isInteger = true
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard isDigit(at: i) else { throw syntaxError("expected a digit after '.'", at: i) }
            while isDigit(at: i) { i += 1 }
            isInteger = false
        }
        if i < bytes.count && (bytes[i] | 0x20) == UInt8(ascii: "e") {
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            guard isDigit(at: i) else { throw syntaxError("expected a digit in the exponent", at: i) }
            while isDigit(at: i) { i += 1 }
            isInteger = false
        }
        index = i
        if isInteger {
            // Accumulate toward negative so Int64.min fits; overflow falls through to Double.
            var value: Int64 = 0
            var overflow = false
            var k = integerStart
            // Eight digits per step (timestamps have 13): a digit at a time was ≈ 8 instructions
            // per digit under callgrind.
            if let base = bytes.baseAddress {
                while integerEnd - k >= 8 {
                    let word = UInt64(littleEndian: UnsafeRawPointer(base + k).loadUnaligned(as: UInt64.self))
                    let (scaled, o1) = value.multipliedReportingOverflow(by: 100_000_000)
                    let (next, o2) = scaled.subtractingReportingOverflow(Int64(Self.eightDigitsValue(word)))
                    if o1 || o2 { overflow = true; break }
                    value = next
                    k += 8
                }
            }
            while !overflow && k < integerEnd {
                defer { k += 1 }
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = times10.subtractingReportingOverflow(Int64(bytes[k] &- UInt8(ascii: "0")))
                if o1 || o2 { overflow = true; break }
                value = next
            }
            if !overflow {
                if negative { return Node(value) }
                if value != .min { return Node(-value) }
            }
        }
        if let double = JSONDecimal.exactlyRounded(bytes, integerStart: integerStart, end: i) {
            return Node(negative ? -double : double)
        }
        // The standard library's conversion rounds correctly; the grammar was checked above, so
        // none of its extensions (hex, "inf", "nan") can reach it.
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else {
            throw syntaxError("expected a number within binary64 range (JSON has no infinity)", at: start)
        }
        return Node(double)
    }
}

extension Node {
    /// True for `{".sv": …}`, a server-value placeholder waiting to be resolved (docs/protocol.md §5.5).
    var isServerValuePlaceholder: Bool {
        guard case .children(let map) = storage, map.count == 1 else { return false }
        return map.first?.key.string == ".sv"
    }
}
