public import HearthCore

/// A storage engine that other servers also write to (PostgreSQL in a cluster): it tells its database
/// what they committed, in the namespace's commit order, interleaved with its own completions.
///
/// Every commit carries the sequence number after the last one the engine knows of; one that finds the
/// number taken (another server committed first) fails with ``StorageError/Code/superseded``, after the
/// engine has read and delivered what the others committed, unless the database says its batches
/// commute with those commits: then the engine commits them again at the next sequence. Otherwise it
/// fails with `.superseded` every batch appended before its database heard of the remote commits, since
/// those were decided without them. ``DurableDatabase`` follows such an engine: it applies remote commits to its trees and decides
/// superseded writes again on the caught-up state (rules, transaction hashes, server values).
public protocol FollowingStorageEngine: StorageEngine {
    /// Starts delivering remote commits, from the state the last `load` returned. `receive` runs on the
    /// engine's completion queue, in order with completions. When it returns false, the engine
    /// supersedes the batches appended before it returned; true says the database took the commit in
    /// beneath them (they commute with it), and the engine commits them after it, unchanged.
    func follow(_ receive: @escaping @Sendable (RemoteCommit) -> Bool)

    /// Reads what other servers committed before the next batch appended after this call commits (its
    /// completion comes after their delivery).
    func catchUp()

    /// Reads what other servers committed now, and tells `completion` (on the completion queue, after
    /// delivering it) whether that worked: a failure means this server may lack some of their
    /// acknowledged writes.
    func catchUp(then completion: @escaping @Sendable (Result<Void, StorageError>) -> Void)
}

/// What other servers committed to a namespace: their batches in commit order, or, when the engine
/// fell too far behind to read them (the change log was trimmed), the whole tree as it is now, with the
/// write IDs (``WriteBatch/writeID``) applied since it fell behind.
public enum RemoteCommit: Sendable {
    case batches([WriteBatch])
    case snapshot(Node, writeIDs: [String] = [])
}
