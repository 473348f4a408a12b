public import HearthCore

/// Firebase's JSON export format (what the console's "Export JSON" writes): the tree with `.priority`
/// keys and no arrays, read and written in chunks.
public enum StorageJSON {
    /// Writes `root` as export JSON in chunks of about `chunkByteCount` bytes: one top-level child at a
    /// time, so the largest string held is one child's JSON, not the whole export's.
    public static func write(_ root: Node, chunkByteCount: Int = 1 << 20, to write: ([UInt8]) throws -> Void) throws {
        guard root.hasChildren else {
            var bytes: [UInt8] = []
            root.appendJSON(to: &bytes, format: .export)
            bytes.append(UInt8(ascii: "\n"))
            try write(bytes)
            return
        }
        var buffer: [UInt8] = [UInt8(ascii: "{")]
        buffer.reserveCapacity(chunkByteCount + 1024)
        var first = true
        var failure: (any Error)?
        if let priority = root.priority {
            buffer.append(contentsOf: Array("\".priority\":".utf8))
            priority.node.appendJSON(to: &buffer, format: .export)
            first = false
        }
        root.children.forEach { key, child in
            if !first { buffer.append(UInt8(ascii: ",")) }
            first = false
            Node(key.string).appendJSON(to: &buffer, format: .export)  // the key, escaped as a JSON string
            buffer.append(UInt8(ascii: ":"))
            child.appendJSON(to: &buffer, format: .export)
            if buffer.count >= chunkByteCount {
                do { try write(buffer) } catch {
                    failure = error
                    return false
                }
                buffer.removeAll(keepingCapacity: true)
            }
            return true
        }
        if let failure { throw failure }
        buffer.append(contentsOf: Array("}\n".utf8))
        try write(buffer)
    }

    /// Reads an export: any JSON, with `.priority` and `.value` keys. Keys are checked against Firebase's
    /// write rules, so an import stores only what a client could have written.
    public static func read(_ bytes: UnsafeRawBufferPointer) throws(StorageError) -> Node {
        do {
            return try Node(jsonBytes: bytes, options: JSONParseOptions(validation: .write(at: .root)))
        } catch {
            throw StorageError(.invalidData, "the import file is not valid Firebase JSON: \(error). Nothing was imported.")
        }
    }
}
