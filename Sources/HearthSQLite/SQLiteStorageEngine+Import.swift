import HearthCore
public import HearthStorage
#if canImport(Glibc)
    import Glibc
#endif

extension SQLiteStorageEngine {
    /// How far a streamed import has come, in bytes of the file.
    public typealias ImportProgress = HearthStorage.ImportProgress

    /// Replaces the namespace's data with the Firebase JSON export read from `descriptor`, in one
    /// transaction (all or nothing), in bounded memory: the file is read in 8 MB steps; each value
    /// whose JSON is at most `wholeValueBytesMax` is parsed by HearthCore's parser (Firebase's write
    /// rules, `.priority`, `.value`, arrays) and written, and larger objects and arrays are walked key
    /// by key, so memory holds one window of the file and one such value, never the whole tree.
    ///
    /// A key that appears twice in a large object keeps its last value. Returns the records written.
    @discardableResult
    public func importJSON(
        from descriptor: Int32, byteCount: Int? = nil, wholeValueBytesMax: Int = 4 << 20,
        progress: ((ImportProgress) -> Void)? = nil
    ) throws(StorageError) -> Int {
        nonisolated(unsafe) var written = 0
        try replaceAll(streaming: { writer in
            var importer = StreamingImporter(
                input: JSONInput(descriptor: descriptor, byteCount: byteCount), wholeValueBytesMax: wholeValueBytesMax)
            importer.progress = progress
            try importer.run(into: &writer)
            written = writer.written
        })
        return written
    }
}

extension RecordWriter: ImportSink {}
