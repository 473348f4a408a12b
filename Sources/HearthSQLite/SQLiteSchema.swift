import HearthCore
import HearthStorage

/// The file layout (docs/storage.md has the numbers behind it).
///
/// One table, one row per leaf plus one per prioritized inner node, keyed by the encoded path:
///
///     CREATE TABLE nodes(path TEXT PRIMARY KEY, value, priority) WITHOUT ROWID
///
/// - `path`: each key's UTF-8 bytes followed by U+0001 (`users␁ada␁name␁`); the root is `''`. Keys
///   cannot hold control characters (Firebase's key rules), so U+0001 is unambiguous, and since it sorts
///   below every byte a key can hold, a node's record comes first and its whole subtree follows as one
///   contiguous range `[p, p with its last byte + 1)`: a set or remove of a subtree is one range delete
///   and a load is one ordered scan that builds the tree depth first.
/// - `value`: INTEGER, REAL or TEXT as JSON has them; booleans as a one-byte BLOB (x'00' or x'01');
///   NULL marks an inner node that only carries a priority (its children are the rows after it).
/// - `priority`: NULL, a REAL or a TEXT.
///
/// `WITHOUT ROWID` keeps the rows in the path B-tree itself: a rowid table would store every path twice
/// (table and index) and look up twice.
///
/// And the write log, batches committed but not yet applied to `nodes` (see `WriteLog`):
///
///     CREATE TABLE log(sequence INTEGER PRIMARY KEY AUTOINCREMENT, operations BLOB NOT NULL)
///
/// - `operations`: one commit's batches, encoded by `WriteBatch.encode` (HearthStorage). The current state is
///   `nodes` with every `log` row applied in `sequence` order; a clean close leaves `log` empty.
/// - `AUTOINCREMENT`: a sequence is never used twice, even after the newest rows were folded and deleted;
///   the storage thread recognises the rows it appended by their sequence (`WriteLog.rows`).
enum SQLiteSchema {
    /// 'Hrth' in `PRAGMA application_id`, so `file` and Hearth can tell a Hearth database from others.
    static let applicationID: Int32 = 0x4872_7468
    /// Layout version in `PRAGMA user_version`; bumped with a migration when the layout changes.
    /// 1: `nodes` only; 2: `nodes` and `log` (a version-1 file gains an empty `log` on open).
    /// 3: and the change feed (`FeedTable`; older files gain an empty one on open).
    /// 4: and the IDs of applied writes (`AppliedWriteTable`; older files gain an empty one on open).
    static let version: Int64 = 4

    static let create = """
        CREATE TABLE IF NOT EXISTS nodes(path TEXT PRIMARY KEY NOT NULL, value, priority) WITHOUT ROWID;
        CREATE VIEW IF NOT EXISTS nodes_readable AS
            SELECT '/' || rtrim(replace(path, char(1), '/'), '/') AS path, value, priority FROM nodes;
        \(createLog)
        \(FeedTable.create)
        \(AppliedWriteTable.create)
        """

    /// What version 2 added to version 1.
    static let createLog = "CREATE TABLE IF NOT EXISTS log(sequence INTEGER PRIMARY KEY AUTOINCREMENT, operations BLOB NOT NULL);"

    /// Separator after every key in an encoded path (`EncodedPath`, HearthStorage).
    static let separator: UInt8 = EncodedPath.separator
}
