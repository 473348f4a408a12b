import HearthCore

/// Write batches as bytes, for engines that log batches before applying them to their records
/// (`SQLiteStorageEngine`'s write log, docs/storage.md) and for PostgreSQL's change log, which other
/// servers read write by write.
///
/// The format, version 2: a version byte, then per operation a tag byte, the path (a varint key count,
/// then per key a varint byte count and its UTF-8 bytes) and, for `put` and `putPriority`, a varint
/// byte count and the node (or the priority as a leaf) as `JSONFormat.lossless` JSON: the export form,
/// which keeps priorities, with every double written so that it reads back as a double. A one-byte
/// tag ends each batch but the last, so that readers can tell the writes apart (``decodeBatches(_:)``);
/// a logged group is still applied as a whole or not at all. Version 3 adds a batch's write ID
/// (``writeID``): a tag byte, a varint byte count and the ID's bytes, after its operations, so that
/// servers reading PostgreSQL's change log learn which client writes another server applied. A group
/// without write IDs is written as version 2, which servers before version 3 read. Version 1, without
/// batch ends, still reads (as one batch).
extension WriteBatch {
    static let encodingVersion: UInt8 = 2
    static let encodingVersionWithWriteIDs: UInt8 = 3

    private enum Tag: UInt8 {
        case removeSubtree = 1, removeRecord, put, putPriority
        /// Between two batches.
        case endOfBatch
        /// The batch's write ID (version 3).
        case writeID
    }

    /// Appends the encoding of `batches`' operations, in order, to `bytes`.
    public static func encode(_ batches: some Collection<WriteBatch>, into bytes: inout [UInt8]) {
        let withWriteIDs = batches.contains { $0.writeID != nil }
        bytes.append(withWriteIDs ? encodingVersionWithWriteIDs : encodingVersion)
        var json: [UInt8] = []
        var first = true
        for batch in batches {
            if !first { bytes.append(Tag.endOfBatch.rawValue) }
            first = false
            for operation in batch.operations {
                let tag: Tag
                let node: Node?
                switch operation {
                case .removeSubtree: (tag, node) = (.removeSubtree, nil)
                case .removeRecord: (tag, node) = (.removeRecord, nil)
                case .put(_, let value): (tag, node) = (.put, value)
                case .putPriority(_, let priority): (tag, node) = (.putPriority, priority.node)
                }
                bytes.append(tag.rawValue)
                StorageBytes.append(operation.path, to: &bytes)
                if let node {
                    // The JSON first, in its own buffer, because its length precedes it.
                    json.removeAll(keepingCapacity: true)
                    node.appendJSON(to: &json, format: .lossless)
                    StorageBytes.appendVarint(json.count, to: &bytes)
                    bytes.append(contentsOf: json)
                }
            }
            if let id = batch.writeID {
                bytes.append(Tag.writeID.rawValue)
                StorageBytes.appendSlice(id.utf8, to: &bytes)
            }
        }
    }

    /// The operations `encode` wrote, as one batch.
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) when the bytes are not such an encoding.
    public init(decoding bytes: UnsafeRawBufferPointer) throws(StorageError) {
        self.init(operations: try Self.decodeBatches(bytes).flatMap(\.operations))
    }

    /// The batches `encode` wrote, in order (one for version 1, which did not mark where they end).
    ///
    /// - Throws: ``StorageError`` (`.corrupt`) when the bytes are not such an encoding.
    public static func decodeBatches(_ bytes: UnsafeRawBufferPointer) throws(StorageError) -> [WriteBatch] {
        var reader = StorageBytes.Reader(bytes: bytes)
        let version = try reader.byte()
        guard (1...Self.encodingVersionWithWriteIDs).contains(version) else {
            throw StorageError(.corrupt, "a logged write has an unknown format (version \(version)).")
        }
        var batches: [WriteBatch] = []
        var operations: [Operation] = []
        var writeID: String?
        func endBatch() {
            var batch = WriteBatch(operations: operations)
            batch.writeID = writeID
            batches.append(batch)
            operations = []
            writeID = nil
        }
        while !reader.isAtEnd {
            guard let tag = Tag(rawValue: try reader.byte()), version > 1 || tag != .endOfBatch, version > 2 || tag != .writeID else {
                throw StorageError(.corrupt, "a logged write has an unknown operation at byte \(reader.offset - 1).")
            }
            if tag == .endOfBatch {
                endBatch()
                continue
            }
            if tag == .writeID {
                writeID = String(decoding: try reader.slice(), as: UTF8.self)
                continue
            }
            let path = try reader.path()
            switch tag {
            case .endOfBatch, .writeID: break
            case .removeSubtree: operations.append(.removeSubtree(path))
            case .removeRecord: operations.append(.removeRecord(path))
            case .put: operations.append(.put(path, try reader.node()))
            case .putPriority:
                guard let priority = Priority(try reader.node()) else {
                    throw StorageError(.corrupt, "a logged priority at \(path) is neither a number nor a string.")
                }
                operations.append(.putPriority(path, priority))
            }
        }
        endBatch()
        return batches
    }
}
