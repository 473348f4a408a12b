import HearthCore
import HearthStorage

/// A streamed import's operations (`StreamingImporter`) as statements on the import's pipeline, in
/// chunks of about `recordsPerChunk` records (`RecordChanges` makes each chunk a handful of statements).
///
/// The importer removes each key of a large object before writing it, since an object may repeat a key.
/// Sent as they come, those would be one range delete per key of a million-key object, for nothing: the
/// import began by removing every record. So a removal goes through only for a key seen before (here,
/// a hash of its path seen before: a collision sends a removal of a key with nothing stored yet, which
/// changes nothing).
struct PostgresImportSink: ImportSink {
    static let recordsPerChunk = 8_192

    let pipeline: PostgresConnection.Pipeline
    let namespace: String
    private(set) var written = 0
    private var changes = RecordChanges()
    private var keysSeen: Set<Int> = []

    init(pipeline: PostgresConnection.Pipeline, namespace: String) {
        self.pipeline = pipeline
        self.namespace = namespace
    }

    mutating func apply(_ operation: WriteBatch.Operation) throws {
        if case .removeSubtree(let path) = operation, keysSeen.insert(path.hashValue).inserted { return }
        changes.apply(operation)
        if changes.upserts.count >= Self.recordsPerChunk { try flush() }
    }

    /// Sends what is held.
    mutating func flush() throws(PostgresError) {
        guard !changes.isEmpty else { return }
        for statement in changes.statements(namespace: namespace) { try pipeline.send(statement) }
        written += changes.upserts.count
        changes = RecordChanges()
    }
}
