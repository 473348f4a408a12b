import HearthCore

/// A connection's onDisconnect operations (docs/protocol.md §2.8): overwrites recorded now, run when the
/// connection ends. A value: it records, cancels and hands out the writes to make; the session runs them.
///
/// Recorded overwrites never overlap: recording at a path first cancels what is at or below it, and
/// cancelling below an overwrite splits it into its children so only the cancelled subtree is dropped.
struct OnDisconnectQueue {
    /// One recorded overwrite, with who registered it: it runs with that credential, even if the
    /// connection later signed out or its token expired (a presence flag must still go offline).
    struct Operation {
        let path: Path
        let value: Node
        let caller: Caller
    }

    private(set) var operations: [Operation] = []

    var count: Int { operations.count }

    /// Records overwrites of `values` (absolute paths, none overlapping another) as `caller`, replacing
    /// what was recorded at or below each. Refused, and nothing changed, when the queue would pass `limit`.
    mutating func record(_ values: [(Path, Node)], as caller: Caller, limit: Int) -> Bool {
        var next = self
        for (path, value) in values {
            next.cancel(at: path)
            next.operations.append(Operation(path: path, value: value, caller: caller))
        }
        guard next.operations.count <= limit else { return false }
        self = next
        return true
    }

    /// Forgets what is recorded at or below `path`; an overwrite recorded above it keeps its other children.
    mutating func cancel(at path: Path) {
        var kept: [Operation] = []
        for operation in operations {
            if path.contains(operation.path) { continue }
            if operation.path.contains(path) {
                kept += Self.split(operation, removing: path)
            } else {
                kept.append(operation)
            }
        }
        operations = kept
    }

    /// `operation` as per-child overwrites that leave `removed` (below it) alone.
    static func split(_ operation: Operation, removing removed: Path) -> [Operation] {
        guard operation.path != removed, let next = removed.relative(to: operation.path)?.first else { return [] }
        var operations: [Operation] = []
        operation.value.children.forEach { key, child in
            let part = Operation(path: operation.path.appending(key), value: child, caller: operation.caller)
            if key == next {
                operations += split(part, removing: removed)
            } else {
                operations.append(part)
            }
            return true
        }
        return operations
    }

    /// What is recorded, for a cluster's ledger (``OnDisconnectLedger``).
    var records: [OnDisconnectRecord] {
        operations.map { OnDisconnectRecord(path: $0.path, value: $0.value, isAdmin: $0.caller.isAdmin, auth: $0.caller.auth) }
    }

    /// Groups `records` as ``drain()`` groups operations: one merge per run of the same credential.
    static func groups(_ records: [OnDisconnectRecord]) -> [(caller: Caller, values: [(Path, Node)])] {
        var queue = OnDisconnectQueue()
        queue.operations = records.map { Operation(path: $0.path, value: $0.value, caller: Caller(isAdmin: $0.isAdmin, auth: $0.auth)) }
        return queue.drain()
    }

    /// Empties the queue into the writes to make: one multi-path merge at the root per run of operations
    /// registered with the same credential, so the rules decide each whole, as they did at registration.
    mutating func drain() -> [(caller: Caller, values: [(Path, Node)])] {
        var groups: [(caller: Caller, values: [(Path, Node)])] = []
        for operation in operations {
            if let last = groups.indices.last, groups[last].caller.isAdmin == operation.caller.isAdmin,
                groups[last].caller.auth == operation.caller.auth
            {
                groups[last].values.append((operation.path, operation.value))
            } else {
                groups.append((operation.caller, [(operation.path, operation.value)]))
            }
        }
        operations = []
        return groups
    }
}
