import Foundation
import HearthCore
import HearthStorage
import HearthSupport
import Synchronization

/// The storage thread's side of the engine: its connection, where the namespace's change log stands,
/// and how a group of batches becomes one transaction. Used on the storage thread alone.
///
/// A commit is one pipeline, one implicit transaction: the `hearth_changes` row with the next sequence
/// first (its primary key fences out any other commit built on the same state), then the record changes
/// (`RecordChanges`). When the connection is lost after a commit was sent, whether it landed is unknown;
/// the writer reconnects within the commit's time (`PostgresTimeouts.commit`) and reads the sequence
/// (`SequenceCheck`): stored means success, not stored means it is sent once more. When that cannot be
/// told in time the batches fail, and the next connect tells the log what became of them.
final class PostgresWriter: GroupCommitter, @unchecked Sendable {  // confined to the storage thread, which it is handed to
    let endpoint: PostgresEndpoint
    let namespace: String
    private let log: Log
    private var connection: PostgresConnection?
    /// The namespace's last committed sequence, read on every connect; nil before the first.
    private var lastSequence: Int64? {
        didSet { knownSequence.set(lastSequence ?? 0) }
    }
    /// `lastSequence`, readable beside the storage thread (the listener skips notifications of commits
    /// this writer already has).
    let knownSequence = KnownSequence()

    final class KnownSequence: Sendable {
        private let value = Atomic<Int64>(0)
        func set(_ sequence: Int64) { value.store(sequence, ordering: .relaxed) }
        var current: Int64 { value.load(ordering: .relaxed) }
    }
    /// A commit whose answer was lost: its sequence and size, until a connect tells what became of it.
    private var inDoubt: (sequence: Int64, batchCount: Int)?
    /// Set once a database follows the change log (a cluster): a sequence that moved on while this
    /// writer was away is caught up with, not jumped over.
    private var following = false
    /// Connections opened so far (the first, then one per reconnect), read by the engine's statistics
    /// beside the storage thread.
    let connectionCount = ConnectionCount()

    final class ConnectionCount: Sendable {
        private let value = Atomic<Int>(0)
        func increment() { value.add(1, ordering: .relaxed) }
        var current: Int { value.load(ordering: .relaxed) }
    }

    /// Change-log rows kept per namespace: nothing reads them yet (the cluster will, docs/storage.md), so
    /// they are bounded rather than kept forever. Commits prune every `changeLogPruneInterval` commits.
    static let changeLogRetention: Int64 = 10_000
    static let changeLogPruneInterval: Int64 = 1_000

    /// How long the namespace's change feed keeps entries; commits trim it every `feedTrimInterval`.
    private let feedRetention: ChangeFeedRetention
    static let feedTrimInterval: Int64 = 256
    /// The feed row's buffer, reused between commits.
    private var feedFramed: [UInt8] = []

    init(endpoint: PostgresEndpoint, namespace: String, feedRetention: ChangeFeedRetention = .standard, log: Log) {
        self.endpoint = endpoint
        self.namespace = namespace
        self.feedRetention = feedRetention
        self.log = log
    }

    /// The commit's change-feed row (at most one: a commit holds at most `entriesPerCommitMax` batches),
    /// and every `feedTrimInterval` commits the retention's trim.
    private func feedStatements(_ batches: [WriteBatch], sequence: Int64) -> [PostgresStatement] {
        var statements: [PostgresStatement] = []
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        ChangeFeedRows.frame(batches[...], framed: &feedFramed) { count, bytes in
            precondition(statements.isEmpty, "a commit holds more batches than a feed row")
            statements.append(PostgresSchema.appendFeed(namespace: namespace, sequence: sequence, time: now, count: count, entries: bytes))
        }
        if sequence % Self.feedTrimInterval == 0 {
            statements.append(PostgresSchema.trimFeed(
                namespace: namespace, before: now - feedRetention.maxAgeMilliseconds, maxBytes: feedRetention.maxBytes))
        }
        return statements
    }

    /// Closes the connection (the engine is closing, or it broke).
    func disconnect() {
        connection?.close()
        connection = nil
    }

    /// Enters the namespace in the catalogue (nothing happens when it is there): a namespace an engine
    /// opens exists, and only a deletion takes it out again (see `PostgresSchema.appendChange`).
    func register() throws(StorageError) {
        let (connection, _) = try connected(by: .now + PostgresTimeouts.connect)
        do {
            _ = try connection.run([PostgresSchema.registerNamespace(namespace)], deadline: .at(.now + PostgresTimeouts.commit))
        } catch {
            if error.breaksConnection { disconnect() }
            throw StorageError(error, at: endpoint, doing: "creating namespace '\(namespace)'")
        }
    }

    /// The storage thread is ending (``GroupCommitter``).
    func finish() { disconnect() }

    // MARK: Connecting

    /// The open connection, or a new one with the layout checked and the sequence read, by `deadline`.
    func connected(by deadline: ContinuousClock.Instant) throws(StorageError) -> (PostgresConnection, SequenceCheck) {
        if let connection { return (connection, .unchanged) }
        let limit = min(deadline, .now + PostgresTimeouts.connect)
        let doing = "connecting for namespace '\(namespace)'"
        do {
            let fresh = try PostgresConnection(endpoint, deadline: limit)
            let found = try Self.prepare(fresh, namespace: namespace, deadline: .at(deadline), endpoint: endpoint)
            let check = adopt(found)
            connection = fresh
            connectionCount.increment()
            return (fresh, check)
        } catch let error as PostgresError {
            throw StorageError(error, at: endpoint, doing: doing)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.io, "\(error)")
        }
    }

    /// Creates or migrates the layout when needed, checks its version and sets up the session; returns
    /// the namespace's last sequence.
    static func prepare(
        _ connection: PostgresConnection, namespace: String, deadline: PostgresDeadline, endpoint: PostgresEndpoint
    ) throws -> Int64 {
        try PostgresSchema.prepareLayout(on: connection, deadline: deadline, endpoint: endpoint)
        let session = try connection.run(PostgresSchema.session(namespace: namespace), deadline: deadline)
        guard session.count >= 2, let version = session[0].firstValue?.bytes(0).flatMap(PostgresBinary.decodeInt32),
            let sequence = session[1].firstValue?.bytes(0).flatMap(PostgresBinary.decodeInt64)
        else {
            throw StorageError(.corrupt, "Hearth's tables at \(endpoint) have no layout version (hearth_schema is empty or altered). Check hearth_schema.")
        }
        if version > PostgresSchema.version {
            throw StorageError(.corrupt, "Hearth's tables at \(endpoint) were made by a newer Hearth (layout \(version); this build reads up to \(PostgresSchema.version)). Upgrade hearth.")
        }
        return sequence
    }

    /// Takes the sequence a new connection found, and says what it means for a commit in doubt.
    private func adopt(_ found: Int64) -> SequenceCheck {
        guard let known = lastSequence else {
            lastSequence = found
            return .unchanged
        }
        let check = SequenceCheck(known: known, found: found, inDoubt: inDoubt?.sequence)
        // A follower stays where it was: its next commit finds the sequence taken and catches up through
        // the log (a commit in doubt that landed comes back as a remote commit). Even `.landed` may be
        // another server's commit at that number: the commit checks the row before believing it.
        if !following { lastSequence = found }
        if following {
            inDoubt = nil
            return check
        }
        if let doubt = inDoubt {
            inDoubt = nil
            switch check {
            case .landed:
                log("hearth: PostgreSQL stored a commit of \(doubt.batchCount) writes to namespace '\(namespace)' that hearth reported failed (the connection was lost as it committed, change \(doubt.sequence)); they show after a restart.")
            case .movedOn:
                log("hearth: the change log of namespace '\(namespace)' moved from \(known) to \(found) while hearth was away: another writer, or a reset. Whether \(doubt.batchCount) writes reported failed are stored cannot be told; restart hearth to load what PostgreSQL holds.")
            case .notLanded, .unchanged: break
            }
        } else if check == .movedOn {
            log("hearth: the change log of namespace '\(namespace)' moved from \(known) to \(found) while hearth was away: another writer, or a reset. Restart hearth to load what PostgreSQL holds, and run one server per namespace.")
        }
        return check
    }

    // MARK: Committing

    /// Commits `batches` in one transaction within `PostgresTimeouts.commit`, reconnecting once if the
    /// connection is gone.
    func commit(_ batches: [WriteBatch]) -> Result<Void, StorageError> {
        let deadline = ContinuousClock.now + PostgresTimeouts.commit
        let carriedOut = batches.flatMap(\.carriesOut)
        if batches.allSatisfy({ $0.isEmpty && $0.feed == nil }) {
            // Nothing to store, nothing to log; ledger entries done by writes that changed nothing still go.
            // A write that changed nothing but has a feed entry (deleting what is not there) is committed
            // for its entry: the feed has every write the server took, as on SQLite.
            return carriedOut.isEmpty ? .success(()) : remove(carriedOut, by: deadline)
        }
        var changes = RecordChanges()
        for batch in batches { changes.apply(batch) }
        var encoded: [UInt8] = []
        WriteBatch.encode(batches, into: &encoded)
        let recordStatements = changes.statements(namespace: namespace)
        let writeIDs = batches.compactMap(\.writeID)
        let doing = "committing \(batches.count) write\(batches.count == 1 ? "" : "s") to namespace '\(namespace)'"
        var retried = false
        while true {
            let connection: PostgresConnection
            do {
                (connection, _) = try connected(by: deadline)
            } catch {
                return .failure(StorageError(error.code, error.message + " Nothing from these writes was stored."))
            }
            let sequence = (lastSequence ?? 0) + 1
            var statements = [PostgresSchema.appendChange(namespace: namespace, sequence: sequence, batch: encoded)] + recordStatements
            statements += feedStatements(batches, sequence: sequence)
            if !carriedOut.isEmpty { statements.append(PostgresDisconnectLeases.carryOut(carriedOut)) }
            if !writeIDs.isEmpty { statements.append(PostgresSchema.appendAppliedWrites(namespace: namespace, sequence: sequence, ids: writeIDs)) }
            if sequence % Self.changeLogPruneInterval == 0 {
                statements.append(PostgresSchema.trimAppliedWrites(namespace: namespace, keep: Limits.rememberedWriteIDsMax))
            }
            statements.append(PostgresSchema.notifyChange(namespace: namespace, sequence: sequence))
            if sequence % Self.changeLogPruneInterval == 0 && sequence > Self.changeLogRetention {
                statements.append(PostgresSchema.pruneChanges(namespace: namespace, through: sequence - Self.changeLogRetention))
            }
            do {
                _ = try connection.run(statements, deadline: .at(deadline))
                lastSequence = sequence
                return .success(())
            } catch {
                if !error.breaksConnection {
                    // Refused and rolled back. The sequence was taken: another server committed first.
                    if error.kind == .server(sqlState: PostgresDisconnectLeases.takenElsewhereState) {
                        return .failure(StorageError(.unavailable, "another node took the onDisconnect operations these writes would have run (this node's cluster lease ran out); nothing from these writes was stored. Retry."))
                    }
                    if error.kind == .server(sqlState: PostgresSchema.namespaceGoneState) {
                        return .failure(StorageError(.notFound, "namespace '\(namespace)' was deleted (on this server or another); nothing from these writes was stored. Opened again, it starts empty."))
                    }
                    if error.kind == .server(sqlState: PostgresError.uniqueViolation) {
                        // After a commit in doubt was judged not stored and sent again, the first attempt may
                        // have committed after all (its backend finished after the check): the number is then
                        // taken by these very writes, which are stored, not superseded.
                        if retried, let stored = try? storedChange(sequence, on: connection, by: deadline), stored.elementsEqual(encoded) {
                            lastSequence = sequence
                            return .success(())
                        }
                        return .failure(StorageError(.superseded, "another server committed change \(sequence) to namespace '\(namespace)' first; nothing from these writes was stored."))
                    }
                    let failure = StorageError(error, at: endpoint, doing: doing)
                    return .failure(StorageError(failure.code, failure.message + " Nothing from these writes was stored."))
                }
                disconnect()
                inDoubt = (sequence, batches.count)
                if !retried && ContinuousClock.now < deadline {
                    retried = true
                    // Ask a new connection whether it landed, within the same deadline.
                    if let reconnected = try? connected(by: deadline) {
                        switch reconnected.1 {
                        case .landed where !following:
                            return .success(())
                        case .landed:
                            // In a cluster another server may have committed at that number: ours landed only
                            // if the row holds this batch; otherwise it is superseded (caught up, decided again).
                            guard let stored = try? storedChange(sequence, on: reconnected.0, by: deadline) else { break }
                            if stored.elementsEqual(encoded) {
                                lastSequence = sequence
                                inDoubt = nil
                                return .success(())
                            }
                            inDoubt = nil
                            return .failure(StorageError(.superseded, "another server committed change \(sequence) to namespace '\(namespace)' first; nothing from these writes was stored."))
                        case .notLanded, .unchanged: continue  // not stored: send it again
                        case .movedOn: break
                        }
                    }
                }
                let lost = StorageError(error, at: endpoint, doing: doing)
                return .failure(StorageError(.unavailable, lost.message + " Whether PostgreSQL stored these writes is unknown: hearth checks when it reconnects and says so in its log."))
            }
        }
    }

    /// Removes ledger entries that writes which changed nothing carried out.
    private func remove(_ entries: [LedgerEntry], by deadline: ContinuousClock.Instant) -> Result<Void, StorageError> {
        do {
            let (connection, _) = try connected(by: deadline)
            do {
                _ = try connection.run([PostgresDisconnectLeases.remove(entries)], deadline: .at(deadline))
            } catch {
                if error.breaksConnection { disconnect() }
                return .failure(StorageError(error, at: endpoint, doing: "removing the onDisconnect operations a write carried out"))
            }
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// The batch bytes of change `sequence` of the namespace, as stored.
    private func storedChange(_ sequence: Int64, on connection: PostgresConnection, by deadline: ContinuousClock.Instant) throws -> [UInt8] {
        let results = try connection.run([PostgresSchema.changes(namespace: namespace, after: sequence - 1, limit: 1)], deadline: .at(deadline))
        guard let result = results.first, result.rowCount > 0 else { throw StorageError(.io, "change \(sequence) is not in the log") }
        let row = PostgresRow(result: result, index: 0)
        guard row.bytes(0).flatMap(PostgresBinary.decodeInt64) == sequence, let bytes = row.bytes(1) else {
            throw StorageError(.io, "change \(sequence) is not in the log")
        }
        return Array(bytes)
    }

    // MARK: Following other servers

    /// Rows read per query while catching up.
    static let catchUpRowsPerQuery = 1_000

    /// From now on a sequence that moved on is caught up with (see `adopt`); `sequence` is where the
    /// database's tree stands (the snapshot it loaded), when known.
    func startFollowing(from sequence: Int64?) {
        following = true
        if let sequence { lastSequence = sequence }
    }

    /// What other servers committed after `lastSequence`, read from the change log in order; the whole
    /// tree instead (a snapshot with its sequence) when the rows needed were trimmed away.
    func catchUp() -> Result<RemoteCommit?, StorageError> {
        let deadline = ContinuousClock.now + PostgresTimeouts.commit
        let doing = "reading what other servers committed to namespace '\(namespace)'"
        do {
            let (connection, _) = try connected(by: deadline)
            guard let start = lastSequence else { return .success(nil) }
            var next = start
            var batches: [WriteBatch] = []
            while true {
                let rows: [PostgresRow]
                do {
                    let results = try connection.run(
                        [PostgresSchema.changes(namespace: namespace, after: next, limit: Self.catchUpRowsPerQuery)], deadline: .at(deadline))
                    guard let result = results.first else { break }
                    rows = (0..<Int32(clamping: result.rowCount)).map { PostgresRow(result: result, index: $0) }
                } catch {
                    if error.breaksConnection { disconnect() }
                    throw StorageError(error, at: endpoint, doing: doing)
                }
                for row in rows {
                    guard let sequence = row.bytes(0).flatMap(PostgresBinary.decodeInt64), let bytes = row.bytes(1) else {
                        throw StorageError(.corrupt, "a change-log row of namespace '\(namespace)' at \(endpoint) does not decode.")
                    }
                    // The log has no gaps; one here means the rows after `next` were trimmed. A streamed
                    // import's change is not in the log either, only its marker.
                    guard sequence == next + 1, !bytes.elementsEqual(PostgresSchema.reloadMarker) else {
                        return .success(try snapshot(on: connection, doing: doing))
                    }
                    batches += try WriteBatch.decodeBatches(UnsafeRawBufferPointer(bytes))
                    next = sequence
                }
                if rows.count < Self.catchUpRowsPerQuery { break }
            }
            // Nothing after `next`: rows taken out by trimming would show as a gap after the first one kept,
            // so this is nothing new (a commit that found its sequence taken reads it on the next try).
            if batches.isEmpty { return .success(nil) }
            lastSequence = next
            return .success(.batches(batches))
        } catch let error as StorageError {
            return .failure(error)
        } catch {
            return .failure(StorageError(.io, "\(error)"))
        }
    }

    private func snapshot(on connection: PostgresConnection, doing: String) throws(StorageError) -> RemoteCommit {
        do {
            // The IDs applied since this server's position, read first: any the snapshot holds are among
            // them (more are harmless: they are stored).
            let writeIDs = try PostgresStorageEngine.appliedWriteIDs(
                namespace: namespace, after: lastSequence ?? 0, on: connection, endpoint: endpoint, location: "PostgreSQL \(endpoint)")
            let snapshot = try PostgresSnapshot.read(namespace: namespace, on: connection, location: "PostgreSQL \(endpoint)", progress: nil)
            lastSequence = snapshot.sequence
            log("hearth: namespace '\(namespace)' fell behind the change log's trimmed rows; reloaded it whole at change \(snapshot.sequence).")
            return .snapshot(snapshot.root, writeIDs: writeIDs)
        } catch {
            // The transaction may still be open: a new connection starts clean.
            disconnect()
            throw error
        }
    }

    // MARK: Replacing everything

    /// Replaces the namespace's records with `root`'s in one transaction, logged as one change (remove
    /// the root, put the tree) so that followers see the import too. A connection found broken is
    /// replaced and the import sent once more when the sequence says it did not land, as for commits.
    func replaceAll(with root: Node, progress: ((LoadProgress) -> Void)?) throws(StorageError) {
        let doing = "replacing namespace '\(namespace)' (an import)"
        let operations: [WriteBatch.Operation] = root.isEmpty ? [.removeSubtree(.root)] : [.removeSubtree(.root), .put(.root, root)]
        var encoded: [UInt8] = []
        WriteBatch.encode([WriteBatch(operations: operations)], into: &encoded)
        let total = root.leafCount
        var retried = false
        while true {
            let (connection, _) = try connected(by: .now + PostgresTimeouts.silence)
            let sequence = (lastSequence ?? 0) + 1
            do {
                try send(root, as: sequence, change: encoded, on: connection, total: total, progress: progress)
                lastSequence = sequence
                progress?(LoadProgress(done: total, total: total))
                return
            } catch {
                guard error.breaksConnection else { throw StorageError(error, at: endpoint, doing: doing) }
                disconnect()
                inDoubt = (sequence, 1)
                if !retried, let reconnected = try? connected(by: .now + PostgresTimeouts.connect) {
                    retried = true
                    switch reconnected.1 {
                    case .landed:
                        progress?(LoadProgress(done: total, total: total))
                        return
                    case .notLanded, .unchanged: continue
                    case .movedOn: break
                    }
                }
                let lost = StorageError(error, at: endpoint, doing: doing)
                throw StorageError(.unavailable, lost.message + " Whether PostgreSQL stored the import is unknown: load the namespace to see.")
            }
        }
    }

    /// Replaces the namespace's records with the Firebase JSON export read from `descriptor`, in one
    /// transaction and bounded memory (`StreamingImporter`, `PostgresImportSink`). The change log gets a
    /// reload marker instead of the tree: followers load a snapshot when they reach it. Returns the
    /// records written.
    func importJSON(from descriptor: Int32, byteCount: Int?, progress: ((ImportProgress) -> Void)?) throws(StorageError) -> Int {
        let doing = "importing into namespace '\(namespace)'"
        let (connection, _) = try connected(by: .now + PostgresTimeouts.silence)
        let sequence = (lastSequence ?? 0) + 1
        do {
            let pipeline = try PostgresConnection.Pipeline(connection, deadline: .afterSilence(PostgresTimeouts.silence))
            try pipeline.send(PostgresSchema.appendChange(namespace: namespace, sequence: sequence, batch: PostgresSchema.reloadMarker))
            try pipeline.send(PostgresSchema.deleteAllRecords(namespace: namespace))
            for statement in PostgresSchema.clearFeed(namespace: namespace, through: sequence) { try pipeline.send(statement) }
            var sink = PostgresImportSink(pipeline: pipeline, namespace: namespace)
            var importer = StreamingImporter(input: JSONInput(descriptor: descriptor, byteCount: byteCount))
            importer.progress = progress
            try importer.run(into: &sink)
            try sink.flush()
            try pipeline.send(PostgresSchema.notifyChange(namespace: namespace, sequence: sequence))
            _ = try pipeline.finish()
            lastSequence = sequence
            return sink.written
        } catch let error as PostgresError {
            // Closing the connection rolls back what was sent before the pipeline's sync.
            disconnect()
            if error.kind == .server(sqlState: PostgresError.uniqueViolation) {
                throw StorageError(.superseded, "another server wrote to namespace '\(namespace)' while it was being imported; nothing was imported. Run the import again (with the namespace's writers stopped).")
            }
            let failure = StorageError(error, at: endpoint, doing: doing)
            guard error.breaksConnection else { throw StorageError(failure.code, failure.message + " Nothing was imported.") }
            inDoubt = (sequence, 1)
            throw StorageError(.unavailable, failure.message + " Whether PostgreSQL stored the import is unknown: load the namespace to see.")
        } catch let error as StorageError {
            disconnect()  // the file is not a valid export: the transaction ends unfinished
            throw error
        } catch {
            disconnect()
            throw StorageError(.io, "\(error) Nothing was imported.")
        }
    }

    /// The import's pipeline: the change row, the removal of every record, then the tree's records in
    /// chunks, sent while the tree is walked.
    private func send(
        _ root: Node, as sequence: Int64, change: [UInt8], on connection: PostgresConnection, total: Int,
        progress: ((LoadProgress) -> Void)?
    ) throws(PostgresError) {
        let pipeline = try PostgresConnection.Pipeline(connection, deadline: .afterSilence(PostgresTimeouts.silence))
        try pipeline.send(PostgresSchema.appendChange(namespace: namespace, sequence: sequence, batch: change))
        try pipeline.send(PostgresSchema.deleteAllRecords(namespace: namespace))
        for statement in PostgresSchema.clearFeed(namespace: namespace, through: sequence) { try pipeline.send(statement) }
        var columns = RecordColumns()
        var path = EncodedPath()
        var written = 0
        try StoredRecord.forEach(in: root, at: &path) { (bytes, record) throws(PostgresError) in
            columns.append(path: bytes, record)
            if columns.isFull {
                written += columns.count
                try pipeline.send(PostgresSchema.upsertRecords(namespace: namespace, columns: columns))
                columns = RecordColumns()
                progress?(LoadProgress(done: written, total: total))
            }
        }
        if columns.count > 0 { try pipeline.send(PostgresSchema.upsertRecords(namespace: namespace, columns: columns)) }
        try pipeline.send(PostgresSchema.notifyChange(namespace: namespace, sequence: sequence))
        _ = try pipeline.finish()
    }
}
