/// Renders nodes as JSON exactly as Firebase's JavaScript side would: strings escaped like
/// `JSON.stringify`, numbers like `Number.prototype.toString`, keys in Firebase key order.
struct JSONWriter {
    var output: [UInt8]
    let format: JSONFormat

    init(output: [UInt8], format: JSONFormat) {
        self.output = output
        self.format = format
    }

    mutating func write(_ node: Node, indent: Int) {
        switch node.storage {
        case .empty: append("null")
        case .bool(let value): append(value ? "true" : "false")
        case .integer(let value): JSONNumberFormatting.appendInteger(value, to: &output)
        case .double(let value):
            let start = output.count
            JSONNumberFormatting.appendDouble(value, to: &output)
            if format.exactNumbers && !output[start...].contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") }) {
                output.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "0")])
            }
        case .string(let value): appendString(value)
        case .children(let map): writeChildren(map, priority: nil, indent: indent)
        case .prioritized(let base, let priority):
            guard format.includePriorities else { return write(base, indent: indent) }
            if case .children(let map) = base.storage {
                writeChildren(map, priority: priority, indent: indent)
            } else {
                // A prioritized leaf: {".value": v, ".priority": p} (docs/protocol.md §5.1).
                output.append(UInt8(ascii: "{"))
                writeMemberStart(".value", first: true, indent: indent + 1)
                write(base, indent: indent + 1)
                writeMemberStart(".priority", first: false, indent: indent + 1)
                write(priority.node, indent: indent + 1)
                writeClose(UInt8(ascii: "}"), indent: indent)
            }
        }
    }

    mutating func writeChildren(_ map: ChildrenMap, priority: Priority?, indent: Int) {
        if format.arrays, priority == nil, let length = Self.arrayLength(of: map) {
            output.append(UInt8(ascii: "["))
            var next = 0
            map.forEach { key, value in
                let position = Int(key.string)!
                while next < position {
                    writeElementStart(first: next == 0, indent: indent + 1)
                    append("null")
                    next += 1
                }
                writeElementStart(first: next == 0, indent: indent + 1)
                write(value, indent: indent + 1)
                next += 1
                return true
            }
            precondition(next == length, "array length mismatch")
            writeClose(UInt8(ascii: "]"), indent: indent)
            return
        }
        output.append(UInt8(ascii: "{"))
        var first = true
        map.forEach { key, value in
            writeMemberStart(key.string, first: first, indent: indent + 1)
            write(value, indent: indent + 1)
            first = false
            return true
        }
        if let priority {
            writeMemberStart(".priority", first: first, indent: indent + 1)
            write(priority.node, indent: indent + 1)
        }
        writeClose(UInt8(ascii: "}"), indent: indent)
    }

    /// The array length when `map` reads as an array under the JS SDK's rule (docs/protocol.md
    /// §5.4): every key matches `^(0|[1-9][0-9]*)$` and the largest is below twice the count.
    static func arrayLength(of map: ChildrenMap) -> Int? {
        // Such keys are integer keys, which sort first and numerically, so the last key is the
        // largest; checking it first rejects ordinary objects in O(log n).
        guard let last = map.last, let largest = arrayIndex(last.key), largest < 2 * map.count else { return nil }
        var all = true
        map.forEach { key, _ in
            all = arrayIndex(key) != nil
            return all
        }
        return all ? largest + 1 : nil
    }

    static func arrayIndex(_ key: ChildKey) -> Int? {
        let utf8 = key.string.utf8
        guard let first = utf8.first, utf8.count <= 10 else { return nil }
        if first == UInt8(ascii: "0") { return utf8.count == 1 ? 0 : nil }
        var value = 0
        for byte in utf8 {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    // MARK: - Layout

    mutating func newline(indent: Int) {
        output.append(0x0A)
        for _ in 0..<(indent * 2) { output.append(0x20) }
    }

    /// Pretty output follows Firebase's `print=pretty`, as remembered from production responses
    /// (docs/protocol.md §6.4 only says "indented"): two spaces per level, one member per line,
    /// and `" : "` between key and value.
    mutating func writeMemberStart(_ key: String, first: Bool, indent: Int) {
        if !first { output.append(UInt8(ascii: ",")) }
        if format.pretty { newline(indent: indent) }
        appendString(key)
        if format.pretty { append(" : ") } else { output.append(UInt8(ascii: ":")) }
    }

    mutating func writeElementStart(first: Bool, indent: Int) {
        if !first { output.append(UInt8(ascii: ",")) }
        if format.pretty { newline(indent: indent) }
    }

    mutating func writeClose(_ bracket: UInt8, indent: Int) {
        if format.pretty { newline(indent: indent) }
        output.append(bracket)
    }

    mutating func append(_ text: StaticString) {
        output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    // MARK: - Strings

    /// Escapes as `JSON.stringify`: `"`, `\` and the controls with short forms (\b \f \n \r \t)
    /// get them, other controls below U+0020 become `\u00xx` in lowercase hex, and everything else
    /// is copied as UTF-8. (Swift strings cannot hold lone surrogates, the one other case
    /// `JSON.stringify` escapes.)
    mutating func appendString(_ string: String) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            for i in 0..<utf8.count {
                let byte = utf8[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
                runStart = i + 1
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                default:
                    let hex = { (nibble: UInt8) in nibble < 10 ? 0x30 + nibble : 0x57 + nibble }  // lowercase
                    output.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex(byte >> 4), hex(byte & 0xF)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }
}
