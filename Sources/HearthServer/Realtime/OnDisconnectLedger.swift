public import HearthCore
public import HearthStorage

/// Where a cluster keeps its connections' onDisconnect operations beside the node that holds them, so
/// that when the node dies another runs them (docs/scaling.md). A node holds a lease it renews; the
/// operations of a node whose lease ran out are claimed by exactly one other node, and the write that
/// runs them removes the claim in its own commit (``LedgerEntry``), so they run once even when the
/// claimant dies too. `hearth serve` passes PostgreSQL's with `--storage postgresql://…`; a single node
/// needs none.
public protocol OnDisconnectLedger: AnyObject, Sendable {
    /// Replaces what is recorded for connection `session` (empty: forgets it). Called on the loop: it
    /// must queue the work, never wait for it.
    func record(session: String, namespace: String, operations: [OnDisconnectRecord])
    /// Starts the lease. `orphans` hears, on any thread, the operations of each connection of a node
    /// whose lease ran out, claimed for this node alone: the write that runs them carries `claim` out.
    /// `leaseLost` hears that this node's own lease ran out (it was paused or cut off) and other nodes
    /// claimed its connections' operations: the connections open now must be closed, unrun.
    func start(
        orphans: @escaping @Sendable (_ namespace: String, _ claim: LedgerEntry, _ operations: [OnDisconnectRecord]) -> Void,
        leaseLost: @escaping @Sendable () -> Void)
    /// Just before a write runs operations here: takes their record (`key`: a closed connection's
    /// session, or the key of an entry this node holds, a claim or an earlier take) and answers, on any
    /// thread, the entry that write carries out; nil when they must not run here (another node claimed
    /// them). What was recorded for the session before is stored first.
    func take(_ key: String, _ completion: @escaping @Sendable (LedgerEntry?) -> Void)
    /// Forgets a claim whose operations will not run (the rules refused them).
    func drop(_ claim: LedgerEntry)
    /// Ends the lease cleanly (after this node ran its own connections' operations).
    func stop()
}

/// One recorded overwrite and the credential it runs with.
public struct OnDisconnectRecord: Sendable, Equatable {
    public var path: Path
    public var value: Node
    public var isAdmin: Bool
    /// The `auth` variable it was registered with (nil: signed out).
    public var auth: Node?

    public init(path: Path, value: Node, isAdmin: Bool, auth: Node?) {
        self.path = path
        self.value = value
        self.isAdmin = isAdmin
        self.auth = auth
    }

    /// The records as one JSON text, for a ledger to store: `[{"p": "/a/b", "v": …, "admin": false, "auth": …}]`.
    public static func encode(_ records: [OnDisconnectRecord]) -> String {
        let items = records.map { record -> String in
            var fields = "\"p\":" + Node(record.path.slashed).json() + ",\"v\":" + record.value.json(.export)
            fields += ",\"admin\":" + (record.isAdmin ? "true" : "false")
            if let auth = record.auth { fields += ",\"auth\":" + auth.json(.export) }
            return "{" + fields + "}"
        }
        return "[" + items.joined(separator: ",") + "]"
    }

    /// What ``encode(_:)`` wrote; nil when it is not that (a ledger's row damaged or made by hand).
    public static func decode(_ text: String) -> [OnDisconnectRecord]? {
        guard let list = try? Node(json: text) else { return nil }
        var records: [OnDisconnectRecord] = []
        var valid = true
        list.children.forEach { _, item in
            guard let slashed = item.child("p").stringValue, (try? KeyValidation.validate(writePath: Path(slashed))) != nil else {
                valid = false
                return false
            }
            let auth = item.child("auth")
            records.append(OnDisconnectRecord(
                path: Path(slashed), value: item.child("v"), isAdmin: item.child("admin").boolValue ?? false, auth: auth.isEmpty ? nil : auth))
            return true
        }
        // Children of an array come in index order: the order the operations were recorded.
        return valid ? records : nil
    }
}
