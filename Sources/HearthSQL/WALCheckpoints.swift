internal import CSQLite

/// How the automatic checkpoints of one connection go. SQLite's own automatic checkpoint (the default
/// WAL hook) ignores a checkpoint that fails, so a database file that cannot be written goes unnoticed
/// while the WAL grows; this one runs the same checkpoint at the same point (after the commit that
/// brings the WAL to `frames`) and keeps its outcome. Confined to the connection's thread.
package final class WALCheckpoints {
    /// Checkpoints that failed (not counting one a reader held back: `SQLITE_BUSY` is routine).
    package private(set) var failures = 0
    /// The last failure's message, until a checkpoint succeeds.
    package private(set) var failing: String?
    let frames: Int32

    init(frames: Int32) { self.frames = frames }

    fileprivate func checkpointed(_ code: Int32, _ database: OpaquePointer?) {
        switch code {
        case SQLITE_OK: failing = nil
        case SQLITE_BUSY, SQLITE_LOCKED: break
        default:
            failures += 1
            failing = database.map { String(cString: sqlite3_errmsg($0)) } ?? "error \(code)"
        }
    }
}

extension SQLiteConnection {
    /// Replaces `PRAGMA wal_autocheckpoint`: a passive checkpoint after each commit that leaves the WAL
    /// holding `frames` frames or more, as SQLite's, whose outcomes the returned value keeps.
    package func checkpointAutomatically(atFrames frames: Int32) -> WALCheckpoints {
        let checkpoints = WALCheckpoints(frames: frames)
        walCheckpoints = checkpoints
        sqlite3_wal_hook(pointer, { context, database, name, frames in
            guard let context else { return SQLITE_OK }
            let checkpoints = Unmanaged<WALCheckpoints>.fromOpaque(context).takeUnretainedValue()
            guard frames >= checkpoints.frames else { return SQLITE_OK }
            checkpoints.checkpointed(sqlite3_wal_checkpoint_v2(database, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil), database)
            // The commit is done whatever the checkpoint did: an error here would report it failed.
            return SQLITE_OK
        }, Unmanaged.passUnretained(checkpoints).toOpaque())
        return checkpoints
    }
}
