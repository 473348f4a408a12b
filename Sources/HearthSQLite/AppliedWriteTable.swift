import HearthCore
import HearthSQL
import HearthStorage

/// The `applied_writes` table: the IDs clients gave their writes (HearthClient's `wid`, docs/protocol.md
/// §2.6.1), each appended in its write's own commit, so that a write is remembered as applied exactly
/// when it is durable. The newest `Limits.rememberedWriteIDsMax` are kept.
///
///     CREATE TABLE applied_writes(sequence INTEGER PRIMARY KEY, id TEXT NOT NULL)
///
/// No index on `id`: the server looks IDs up in memory (it reads them all when it opens the namespace);
/// the table only has to survive a restart. Used on the storage thread.
struct AppliedWriteTable {
    /// Rows in the table, as this engine knows them.
    private(set) var count: Int64
    /// Rows kept (`Limits.rememberedWriteIDsMax`; tests make it small).
    let capacity: Int64
    /// Rows past `capacity` before the oldest are deleted: one delete per this many writes, not one per write.
    private var trimSlack: Int64 { max(1, capacity / 8) }

    static let create = "CREATE TABLE IF NOT EXISTS applied_writes(sequence INTEGER PRIMARY KEY, id TEXT NOT NULL);"

    init(reading connection: SQLiteConnection, capacity: Int = Limits.rememberedWriteIDsMax) throws(SQLiteError) {
        self.capacity = Int64(capacity)
        count = try connection.integer("SELECT count(*) FROM applied_writes")
    }

    /// Records the IDs of a commit's `batches` that carry one (inside its transaction), then deletes the
    /// oldest once the table is past its limit by the slack.
    mutating func append(_ batches: ArraySlice<WriteBatch>, statements: SQLiteStorageEngine.Statements) throws(SQLiteError) {
        for batch in batches {
            guard let id = batch.writeID else { continue }
            statements.appendWriteID.bind(1, text: id)
            try statements.appendWriteID.run()
            count += 1
        }
        guard count > capacity + trimSlack else { return }
        statements.trimWriteIDs.bind(1, int64: capacity)
        try statements.trimWriteIDs.run()
        count = capacity
    }

    /// The newest IDs, oldest first, from `connection` (a reader).
    static func read(_ connection: SQLiteConnection) throws(SQLiteError) -> [String] {
        let select = try connection.prepare("SELECT id FROM applied_writes ORDER BY sequence DESC LIMIT ?1")
        select.bind(1, int64: Int64(Limits.rememberedWriteIDsMax))
        var ids: [String] = []
        while try select.step() { ids.append(select.text(0)) }
        return ids.reversed()
    }
}
