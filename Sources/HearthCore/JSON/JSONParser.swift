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
    var pending: ContiguousArray<PendingChild> = []
    /// Decoded bytes of a string with escapes.
    var unescaped: [UInt8] = []
    var interner = JSONKeyInterner()
    var sortKeys: [SortKey] = []

    /// A child read but not yet placed in its map, with its integer-key value cached for sorting.
    struct PendingChild {
        var key: ChildKey
        var value: Node
        /// The key's value when it is an integer key (sorts first, numerically); `notInteger` if not.
        var integerKey: Int64
        /// The key's first 8 UTF-8 bytes, big-endian and zero-padded: most comparisons are
        /// decided here without touching the strings.
        var prefix: UInt64

        init(key: ChildKey, value: Node, integerKey: Int64) {
            self.key = key
            self.value = value
            self.integerKey = integerKey
            var prefix: UInt64 = 0
            var shift: UInt64 = 56
            for byte in key.string.utf8.prefix(8) {
                prefix |= UInt64(byte) << shift
                shift &-= 8
            }
            self.prefix = prefix
        }
    }

    static var notInteger: Int64 { .min }

    init(bytes: UnsafeRawBufferPointer, options: JSONParseOptions) {
        if let base = bytes.baseAddress {
            // Any initialized memory can be read as bytes.
            self.bytes = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        } else {
            self.bytes = UnsafeBufferPointer(start: nil, count: 0)
        }
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
        return node
    }

    // MARK: - Errors

    func syntaxError(_ expected: String, at offset: Int? = nil) -> DataError {
        let offset = offset ?? index
        let found = offset < bytes.count ? "" : " (found end of input)"
        return DataError(.invalidJSON, "Invalid JSON at byte \(offset): \(expected)\(found)", byteOffset: offset)
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
                throw DataError(
                    .stringTooLong,
                    "String at '\(currentPath.slashed)' (byte \(start)) is \(string.utf8.count) bytes; the limit is \(Limits.stringLengthBytesMax).")
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
            let (key, integerKey, keyBytes) = try parseKey()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw syntaxError("expected ':' after the key")
            }
            index += 1

            var handled = false
            if keyBytes > 0, key.string.utf8.first == UInt8(ascii: ".") {
                switch key.string {
                case ".priority":
                    let valueOffset = index
                    let value = try parseValue(nesting: nesting, depth: depth, pathBytes: pathBytes)
                    if value.isEmpty {
                        priority = nil
                        priorityPlaceholder = nil
                    } else if let leaf = Priority(value), value.priority == nil {
                        priority = leaf
                        priorityPlaceholder = nil
                    } else if value.isServerValuePlaceholder {
                        priority = nil
                        priorityPlaceholder = value
                    } else {
                        throw DataError(
                            .invalidPriority,
                            "Invalid priority at '\(currentPath.slashed)' (byte \(valueOffset)): a priority must be a number, a string or null.")
                    }
                    handled = true
                case ".value":
                    dotValue = try parseValue(nesting: nesting, depth: depth, pathBytes: pathBytes)
                    handled = true
                case ".sv":
                    hasServerValue = true
                    let value = try parseValue(nesting: nesting, depth: depth, pathBytes: pathBytes)
                    if !value.isEmpty {
                        pending.append(PendingChild(key: key, value: value, integerKey: Self.notInteger))
                    }
                    handled = true
                default:
                    if validating {
                        throw DataError(
                            .invalidKey,
                            "Invalid key '\(key.string)' in path '\(currentPath.appending(key).slashed)': keys must not start with '.' (only .priority, .value and .sv are allowed).")
                    }
                    handled = false
                }
            }

            if !handled {
                ordinaryKeyCount += 1
                let childBytes = pathBytes + keyBytes + 1
                if validating {
                    try validateChild(key, keyBytes: keyBytes, depth: depth + 1, pathBytes: childBytes)
                    pathKeys.append(key)
                }
                let value = try parseValue(nesting: nesting, depth: depth + 1, pathBytes: childBytes)
                if validating { pathKeys.removeLast() }
                // Kept even when empty, so a later `"a": null` still overrides an earlier `"a"`;
                // `makeNode` drops empty children.
                pending.append(PendingChild(key: key, value: value, integerKey: integerKey))
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
            // rtdb-protocol.md §5.1: `.value` stands for the whole node; the clients reject it next to
            // ordinary keys because one of the two would have to be dropped.
            if ordinaryKeyCount > 0 || hasServerValue || priorityPlaceholder != nil {
                pending.removeSubrange(start...)
                throw DataError(
                    .invalidData,
                    "Invalid data at '\(currentPath.slashed)' (byte \(firstKeyOffset)): '.value' must not be mixed with other keys.")
            }
            return dotValue.withPriority(priority)
        }
        if hasServerValue && validating && (ordinaryKeyCount > 0 || priority != nil || priorityPlaceholder != nil) {
            throw DataError(
                .invalidServerValue,
                "Invalid server value at '\(currentPath.slashed)' (byte \(firstKeyOffset)): '.sv' must be the only key.")
        }
        if let priorityPlaceholder {
            pending.append(PendingChild(key: .priorityKey, value: priorityPlaceholder, integerKey: Self.notInteger))
        }
        return makeNode(from: start).withPriority(priority)
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
        if !valid { try KeyValidation.validate(key, in: path) }
        if depth > Limits.pathDepthMax || pathBytes > Limits.pathLengthBytesMax {
            try KeyValidation.validateLength(of: path)
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
            // rtdb-protocol.md §5.1: arrays are objects keyed by index, with null elements skipped.
            if !value.isEmpty {
                let integerKey = Limits.integerKeyRange.contains(Int64(position)) ? Int64(position) : Self.notInteger
                pending.append(
                    PendingChild(key: key ?? ChildKey(String(position)), value: value, integerKey: integerKey))
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

    /// What sorting a child needs, without its reference-counted parts.
    struct SortKey {
        var prefix: UInt64
        var integerKey: Int64
        var position: Int
    }

    static func compare(_ a: SortKey, _ b: SortKey, _ children: UnsafeBufferPointer<PendingChild>) -> Int {
        if a.integerKey == notInteger && b.integerKey == notInteger && a.prefix != b.prefix {
            if let order = prefixOrder(a.prefix, b.prefix) { return order }
        }
        return compare(children[a.position], children[b.position])
    }

    /// The order two keys' prefixes decide, or nil when the strings must be compared. Byte order
    /// is UTF-16 order unless the first difference involves a non-ASCII byte (characters above
    /// U+FFFF against U+E000–U+FFFF); zero padding orders a shorter key first, as it should, when
    /// the longer one has an ASCII byte there.
    @inline(__always)
    static func prefixOrder(_ a: UInt64, _ b: UInt64) -> Int? {
        let shift = UInt64((a ^ b).leadingZeroBitCount & ~7)
        let byteA = (a << shift) >> 56, byteB = (b << shift) >> 56
        if byteA < 0x80 && byteB < 0x80 { return a < b ? -1 : 1 }
        return nil
    }

    /// Three-way comparison in Firebase key order (`KeyOrder.compare`) using the cached
    /// integer-key values and prefixes, so sorting rarely looks at the strings.
    @inline(__always)
    static func compare(_ a: PendingChild, _ b: PendingChild) -> Int {
        if a.integerKey != notInteger || b.integerKey != notInteger {
            if a.integerKey == notInteger { return 1 }
            if b.integerKey == notInteger { return -1 }
            if a.integerKey != b.integerKey { return a.integerKey < b.integerKey ? -1 : 1 }
            let la = a.key.string.utf8.count, lb = b.key.string.utf8.count
            if la != lb { return la < lb ? -1 : 1 }
        }
        if a.prefix != b.prefix, let order = prefixOrder(a.prefix, b.prefix) { return order }
        return KeyOrder.compareUTF16(a.key.string, b.key.string)
    }

    /// Turns `pending[start...]` into a node and pops them. Input from Firebase (exports, SDK
    /// writes) is usually in key order already, so the common case is one check and an O(n) build.
    mutating func makeNode(from start: Int) -> Node {
        let end = pending.count
        if start == end { return .empty }
        var sorted = !pending[start].value.isEmpty
        var i = start + 1
        while sorted && i < end {
            if pending[i].value.isEmpty || Self.compare(pending[i - 1], pending[i]) >= 0 { sorted = false }
            i += 1
        }
        let map: ChildrenMap
        if sorted {
            // Sorted with no duplicates and no empty values.
            map = ChildrenMap(sortedUniqueArray: ContiguousArray(pending[start..<end].lazy.map { ($0.key, $0.value) }))
        } else {
            // Sort plain sort keys, not the children: moving strings and nodes around costs a
            // retain and release per move. The standard library's sort is stable, so equal keys
            // keep their input order; keep the last of each run and drop empty values.
            sortKeys.removeAll(keepingCapacity: true)
            for position in start..<end {
                let child = pending[position]
                sortKeys.append(SortKey(prefix: child.prefix, integerKey: child.integerKey, position: position))
            }
            pending.withUnsafeBufferPointer { children in
                sortKeys.sort { a, b in Self.compare(a, b, children) < 0 }
            }
            var elements = ContiguousArray<ChildrenMap.Element>()
            elements.reserveCapacity(end - start)
            for n in sortKeys.indices {
                let position = sortKeys[n].position
                if n + 1 < sortKeys.count, sortKeys[n].prefix == sortKeys[n + 1].prefix,
                    pending[position].key == pending[sortKeys[n + 1].position].key { continue }
                if pending[position].value.isEmpty { continue }
                elements.append((pending[position].key, pending[position].value))
            }
            map = ChildrenMap(sortedUniqueArray: elements)
        }
        pending.removeSubrange(start..<end)
        return Node(children: map)
    }

    // MARK: - Strings

    /// Reads an object key: the key, its integer-key value (or `notInteger`) and its UTF-8 length.
    mutating func parseKey() throws(DataError) -> (ChildKey, Int64, Int) {
        let start = index + 1
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            end += 1
        }
        let string: String
        if end < bytes.count && bytes[end] == UInt8(ascii: "\"") {
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<end])
            if raw.count > JSONKeyInterner.inlineLengthMax {
                if let known = interner.lookUp(raw) {
                    string = known
                } else {
                    string = try makeString(raw, offset: start)
                    interner.insert(string, raw)
                }
            } else {
                string = try makeString(raw, offset: start)
            }
            index = end + 1
        } else {
            string = try parseString()
        }
        let count = string.utf8.count
        var integerKey = Self.notInteger
        if count <= 11, let first = string.utf8.first, first == UInt8(ascii: "-") || (first &- 48) < 10 {
            integerKey = KeyOrder.integerValue(of: string) ?? Self.notInteger
        }
        return (ChildKey(string), integerKey, count)
    }

    /// Reads a string starting at the opening quote.
    mutating func parseString() throws(DataError) -> String {
        let start = index + 1
        var end = start
        // Fast path: most strings have no escapes and can be validated and copied in one go.
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            end += 1
        }
        guard end < bytes.count else { throw syntaxError("expected '\"' to close the string", at: end) }
        if bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<end])
            // Short values repeat too (a uid as "author", "uid", "owner"), so they share the key
            // table; long ones are mostly prose and would only fill it.
            if raw.count > JSONKeyInterner.inlineLengthMax && raw.count <= JSONKeyInterner.valueLengthMax {
                if let known = interner.lookUp(raw) { return known }
                let string = try makeString(raw, offset: start)
                interner.insert(string, raw)
                return string
            }
            return try makeString(raw, offset: start)
        }
        if bytes[end] < 0x20 {
            throw syntaxError("expected '\"' to close the string; control characters must be escaped", at: end)
        }
        return try parseEscapedString(from: start, firstEscape: end)
    }

    mutating func parseEscapedString(from start: Int, firstEscape: Int) throws(DataError) -> String {
        unescaped.removeAll(keepingCapacity: true)
        // Raw runs are validated as UTF-8 before copying so errors report input offsets.
        try appendRaw(start..<firstEscape)
        var i = firstEscape
        while true {
            guard i < bytes.count else { throw syntaxError("expected '\"' to close the string", at: i) }
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                index = i + 1
                return String(decoding: unescaped, as: UTF8.self)
            }
            if byte < 0x20 {
                throw syntaxError("expected '\"' to close the string; control characters must be escaped", at: i)
            }
            if byte != UInt8(ascii: "\\") {
                var runEnd = i + 1
                while runEnd < bytes.count {
                    let b = bytes[runEnd]
                    if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b < 0x20 { break }
                    runEnd += 1
                }
                try appendRaw(i..<runEnd)
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
                appendUTF8(scalar)
                continue
            default:
                throw syntaxError("expected an escape character (\" \\ / b f n r t u)", at: i + 1)
            }
            i += 2
        }
    }

    mutating func appendRaw(_ range: Range<Int>) throws(DataError) {
        let raw = UnsafeBufferPointer(rebasing: bytes[range])
        if let bad = JSONParser.firstInvalidUTF8(raw) {
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

    /// A string from raw bytes, validated as UTF-8.
    ///
    /// `String(validating:as:)` would do this in one call, but on Linux it runs unspecialized
    /// generic code that looks up type metadata on every call (11% of a parse under callgrind);
    /// validating here and then decoding with `String(decoding:as:)`, which is specialized and
    /// skips work for ASCII, costs far less.
    func makeString(_ raw: UnsafeBufferPointer<UInt8>, offset: Int) throws(DataError) -> String {
        if let bad = JSONParser.firstInvalidUTF8(raw) {
            throw syntaxError("expected valid UTF-8", at: offset + bad)
        }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
    /// forms, no surrogates, nothing above U+10FFFF), or nil. Only run on the slow paths.
    static func firstInvalidUTF8(_ raw: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        while i < raw.count {
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
            for k in integerStart..<integerEnd {
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
    /// True for `{".sv": …}`, a server-value placeholder waiting to be resolved (rtdb-protocol.md §5.5).
    var isServerValuePlaceholder: Bool {
        guard case .children(let map) = storage, map.count == 1 else { return false }
        return map.first?.key.string == ".sv"
    }
}
