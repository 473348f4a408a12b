public import HearthCore

/// Takes an engine's records in ``EncodedPath`` byte order: a leaf (`leaf` non-nil, with its priority
/// if any) or an inner node's priority marker (`leaf` nil), which byte order puts before its children.
/// ``RecordTreeBuilder`` makes a tree of them; ``RecordJSONWriter`` writes them out as export JSON.
public protocol RecordSink {
    /// - Throws: ``StorageError`` (`.corrupt`) for records Hearth never writes, or the sink's own error.
    mutating func add(path: UnsafeBufferPointer<UInt8>, leaf: Node?, priority: Priority?) throws(StorageError)
}

extension RecordTreeBuilder: RecordSink {}
