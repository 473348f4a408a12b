public import HearthCore
public import HearthStorage
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

extension PostgresStorageEngine {
    /// Reads every record of the namespace in path order, streamed row by row on a connection of its
    /// own, and builds the tree (``PostgresSnapshot``). One snapshot: commits made meanwhile are wholly in
    /// it or wholly not. `progress` gets the records read every 100,000. The snapshot's sequence is kept
    /// for ``follow(_:)``, which continues from it.
    public func load(progress: ((LoadProgress) -> Void)?) throws(StorageError) -> Node {
        let connection = try openConnection(doing: "loading namespace '\(namespace)'")
        defer { connection.close() }
        let snapshot = try PostgresSnapshot.read(namespace: namespace, on: connection, location: location, progress: progress)
        loadedSequence.withLock { $0 = snapshot.sequence }
        return snapshot.root
    }

    /// The IDs of the newest writes committed with one, oldest first (`hearth_applied_writes`), at
    /// most `Limits.rememberedWriteIDsMax`, read on a connection of its own.
    public func rememberedWriteIDs() throws(StorageError) -> [String] {
        let connection = try openConnection(doing: "reading the applied write IDs of namespace '\(namespace)'")
        defer { connection.close() }
        return try Self.appliedWriteIDs(namespace: namespace, after: 0, on: connection, endpoint: endpoint, location: location)
    }

    /// The newest `Limits.rememberedWriteIDsMax` IDs of writes committed after change `sequence`, oldest
    /// first.
    static func appliedWriteIDs(
        namespace: String, after sequence: Int64, on connection: PostgresConnection, endpoint: PostgresEndpoint, location: String
    ) throws(StorageError) -> [String] {
        let limit = Limits.rememberedWriteIDsMax
        let result: PostgresResult
        do {
            let results = try connection.run(
                [PostgresSchema.appliedWrites(namespace: namespace, after: sequence, limit: limit)], deadline: .at(.now + PostgresTimeouts.commit))
            guard let first = results.first else { return [] }
            result = first
        } catch {
            throw StorageError(error, at: endpoint, doing: "reading the applied write IDs of namespace '\(namespace)'")
        }
        var newestFirst: [String] = []
        for index in 0..<Int32(clamping: result.rowCount) where newestFirst.count < limit {
            guard let bytes = PostgresRow(result: result, index: index).bytes(0), let ids = PostgresBinary.decodeString(bytes) else {
                throw StorageError(.corrupt, "a hearth_applied_writes row of namespace '\(namespace)' at \(location) does not decode.")
            }
            newestFirst += ids.split(separator: " ").reversed().map(String.init)
        }
        return Array(newestFirst.prefix(limit).reversed())
    }

    /// A `hearth_records` row's leaf (nil for a priority marker) and priority, each column decoded with
    /// its length and value checked: a wrong size, invalid UTF-8 or a number that is not finite is
    /// reported as corrupt data, never trusted.
    static func record(_ row: PostgresRow) throws(StorageError) -> (leaf: Node?, priority: Priority?) {
        var leaf: Node?
        func set(_ node: Node) throws(StorageError) {
            guard leaf == nil else { throw .corruptRecords("a record with two values") }
            leaf = node
        }
        if let bytes = row.bytes(1) {
            guard let value = PostgresBinary.decodeBoolean(bytes) else { throw .corruptRecords("a boolean that does not decode") }
            try set(Node(value))
        }
        if let bytes = row.bytes(2) {
            guard let value = PostgresBinary.decodeInt64(bytes) else { throw .corruptRecords("an integer that does not decode") }
            try set(Node(value))
        }
        if let bytes = row.bytes(3) {
            guard let value = PostgresBinary.decodeDouble(bytes), value.isFinite else { throw .corruptRecords("a number that is not finite") }
            try set(Node(value))
        }
        if let bytes = row.bytes(4) {
            guard let value = PostgresBinary.decodeString(bytes) else { throw .corruptRecords("a string that is not UTF-8") }
            try set(Node(value))
        }
        var priority: Priority?
        if let bytes = row.bytes(5) {
            guard let value = PostgresBinary.decodeDouble(bytes), value.isFinite else { throw .corruptRecords("a priority that is not finite") }
            priority = .number(value)
        }
        if let bytes = row.bytes(6) {
            guard priority == nil, let value = PostgresBinary.decodeString(bytes) else { throw .corruptRecords("a priority that does not decode") }
            priority = .string(value)
        }
        if leaf == nil && priority == nil { throw .corruptRecords("a record with neither a value nor a priority") }
        return (leaf, priority)
    }

    /// Writes the namespace as Firebase's export JSON from one consistent snapshot, streamed: each chunk
    /// of about `chunkByteCount` goes to `write` as the records arrive, so memory holds one chunk, never
    /// the tree (``RecordJSONWriter``). `progress` gets the records read every 100,000.
    public func writeExport(
        chunkByteCount: Int = 1 << 20, progress: ((LoadProgress) -> Void)?, to write: @escaping RecordJSONWriter.Write
    ) throws(StorageError) {
        let connection = try openConnection(doing: "exporting namespace '\(namespace)'")
        defer { connection.close() }
        var writer = RecordJSONWriter(chunkByteCount: chunkByteCount, write: write)
        _ = try PostgresSnapshot.stream(namespace: namespace, on: connection, location: location, progress: progress, into: &writer)
        try writer.finish()
    }

    /// Writes the namespace as Firebase's JSON export (what `hearth export` writes, and `hearth import`
    /// reads back into any engine) to `destination`: one consistent snapshot (one query), streamed
    /// (``writeExport(chunkByteCount:progress:to:)``) to `destination.partial` (owner-only), synced, and
    /// renamed into place only when complete.
    public func backup(to destination: String, progress: ((LoadProgress) -> Void)?) throws(StorageError) {
        let partial = destination + ".partial"
        unlink(partial)
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.fileError(errno, doing: "create \(partial)") }
        do throws(StorageError) {
            try writeExport(progress: progress) { bytes throws(StorageError) in
                try Self.writeAll(bytes, to: descriptor, named: partial)
            }
            guard fsync(descriptor) == 0 else { throw Self.fileError(errno, doing: "sync \(partial)") }
        } catch {
            Glibc.close(descriptor)
            unlink(partial)
            throw error
        }
        Glibc.close(descriptor)
        guard rename(partial, destination) == 0 else {
            let code = errno
            unlink(partial)
            throw Self.fileError(code, doing: "move the backup into place at \(destination)")
        }
    }

    /// Writes all of `bytes` to `descriptor` (the file `name`), however many write(2) calls it takes.
    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32, named name: String) throws(StorageError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw fileError(errno, doing: "write \(name)")
            }
            offset += written
        }
    }

    static func fileError(_ code: Int32, doing what: String) -> StorageError {
        let reason = String(cString: strerror(code))
        switch code {
        case EACCES, EPERM, EROFS: return StorageError(.readOnly, "cannot \(what): \(reason). Choose a writable place for the backup.")
        case ENOSPC, EDQUOT: return StorageError(.diskFull, "cannot \(what): the disk is full. Free some space and retry.")
        case ENOENT: return StorageError(.notFound, "cannot \(what): a parent directory does not exist.")
        default: return StorageError(.io, "cannot \(what): \(reason).")
        }
    }

    /// `VACUUM (ANALYZE)` of Hearth's tables on a connection of its own, while commits go on (a plain
    /// VACUUM does not block them). It makes the space of removed rows reusable and refreshes the
    /// planner's statistics; it does not shrink the files (`VACUUM FULL` would, holding an exclusive lock
    /// on every namespace's records meanwhile). The tables are shared, so this compacts every namespace.
    /// PostgreSQL skips, with a warning only, tables the URL's user does not own: then this does nothing.
    public func compact() throws(StorageError) {
        let doing = "compacting (VACUUM) Hearth's tables"
        let connection = try openConnection(doing: doing)
        defer { connection.close() }
        do {
            for statement in PostgresSchema.vacuum() {
                _ = try connection.execute(statement, deadline: .afterSilence(PostgresTimeouts.silence))
            }
        } catch {
            throw StorageError(error, at: endpoint, doing: doing)
        }
    }
}
