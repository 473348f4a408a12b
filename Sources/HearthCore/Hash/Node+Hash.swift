extension Node {
    /// The node's Firebase hash: what clients send in a listen's `h` and a compare-and-set put's
    /// `h`, and Hearth's natural REST ETag (docs/protocol.md §4).
    ///
    /// `""` for the empty node; otherwise the standard base64 of the SHA-1 of a preimage that
    /// spells out the value with its priorities.
    ///
    ///     Node(4).hash                               // "eVih19a6ZDz3NL32uVBtg9KSgQY="
    ///     Node(["a": Node(1), "b": Node("x")]).hash  // "jRI9dwRS9sb4SWm8uuoN7+xBk4g="
    ///
    /// The preimage is streamed into SHA-1 rather than built as a string, and a child contributes
    /// its 28-byte base64 digest from the stack, so hashing a node with a million children
    /// allocates little beyond the node itself.
    public var hash: String {
        guard let digest = hashDigest() else { return "" }
        return digest.withUnsafeBytes { Base64.encode($0) }
    }

    /// The SHA-1 of the node's hash preimage, or nil when the preimage is empty (the empty node).
    func hashDigest() -> SHA1.Digest? {
        var sha = SHA1()
        writeHashPreimage(into: &sha)
        return sha.byteCount == 0 ? nil : sha.finalize()
    }

    /// The whole preimage as text: for tests and debugging only, since it builds the string that
    /// `hash` avoids.
    var hashPreimage: String {
        var text = PreimageText()
        writeHashPreimage(into: &text)
        return String(decoding: text.bytes, as: UTF8.self)
    }

    /// Writes the preimage of docs/protocol.md §4.1; writes nothing for the empty node.
    func writeHashPreimage(into sink: inout some HashPreimageSink) {
        if case .empty = storage { return }
        if let priority {
            // Step 3: `priority:<priority text>:`, then the value's own preimage.
            sink.write("priority:")
            switch priority {
            case .number(let value): Node.writeNumber(value, into: &sink)
            case .string(let value): sink.write("string:"); sink.write(value)
            }
            sink.write(":")
        }
        switch unprioritized.storage {
        case .empty, .prioritized:
            return
        case .bool(let value):
            sink.write(value ? "boolean:true" : "boolean:false")
        case .integer, .double:
            // Step 4 and §4.3: integers hash as their binary64 value, as Android's long does.
            Node.writeNumber(numberValue!, into: &sink)
        case .string(let value):
            sink.write("string:")
            sink.write(value)
        case .children(let map):
            Node.writeChildren(map, into: &sink)
        }
    }

    /// Writes `number:` and the 16 lowercase hex digits of the binary64 bits, big-endian.
    static func writeNumber(_ value: Double, into sink: inout some HashPreimageSink) {
        let digits: StaticString = "0123456789abcdef"
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let bits = value.bitPattern
        withUnsafeMutableBytes(of: &text) { buffer in
            for (offset, byte) in "number:".utf8.enumerated() { buffer[offset] = byte }
            digits.withUTF8Buffer { table in
                for nibble in 0..<16 {
                    buffer[7 + nibble] = table[Int(bits >> UInt64(60 - 4 * nibble) & 0xF)]
                }
            }
            sink.write(UnsafeRawBufferPointer(rebasing: buffer[..<23]))
        }
    }

    /// Writes `:key:hash(child)` for every non-empty child in priority-index order (step 5):
    /// children without a priority first, then numeric priorities ascending, then string
    /// priorities; ties keep the map's Firebase key order.
    static func writeChildren(_ map: ChildrenMap, into sink: inout some HashPreimageSink) {
        // The map is already in key order, which is the whole answer for children without a
        // priority. They are written in the same pass and only prioritized children (rare) are set
        // aside, so the common case neither allocates nor sorts.
        var prioritized: [(key: ChildKey, node: Node, priority: Priority)] = []
        map.forEach { key, child in
            if let priority = child.priority {
                prioritized.append((key, child, priority))
            } else {
                writeChild(key, child, into: &sink)
            }
            return true
        }
        guard !prioritized.isEmpty else { return }
        // They were collected in key order; breaking ties on position keeps that order without
        // relying on the stability of `sort`.
        var order = Array(prioritized.indices)
        order.sort { a, b in
            let byPriority = ValueOrder.compare(prioritized[a].priority, prioritized[b].priority)
            return byPriority != 0 ? byPriority < 0 : a < b
        }
        for index in order { writeChild(prioritized[index].key, prioritized[index].node, into: &sink) }
    }

    /// Writes `:key:` and the child's base64 digest; an empty child contributes nothing (step 5).
    static func writeChild(_ key: ChildKey, _ child: Node, into sink: inout some HashPreimageSink) {
        guard let digest = child.hashDigest() else { return }
        sink.write(":")
        sink.write(key.string)
        sink.write(":")
        var encoded: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &encoded) { buffer in
            let output = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Base64.encodedCount(20)])
            digest.withUnsafeBytes { Base64.encode($0, into: output) }
            sink.write(UnsafeRawBufferPointer(output))
        }
    }
}

/// Where a hash preimage goes: SHA-1 in production, a byte buffer when a test wants to read it.
protocol HashPreimageSink {
    mutating func write(_ bytes: UnsafeRawBufferPointer)
}

extension HashPreimageSink {
    mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }
}

extension SHA1: HashPreimageSink {
    mutating func write(_ bytes: UnsafeRawBufferPointer) { update(bytes) }
}

/// Collects a preimage as bytes (see `Node.hashPreimage`).
struct PreimageText: HashPreimageSink {
    var bytes: [UInt8] = []
    mutating func write(_ bytes: UnsafeRawBufferPointer) { self.bytes.append(contentsOf: bytes) }
}
