/// An entry of a ledger kept beside a namespace's data: a cluster's claimed onDisconnect operations
/// (docs/scaling.md), each the work of one connection of a node that died. A write that carries entries
/// out (``WriteBatch/carriesOut``) has them removed in the same transaction as its records, so that the
/// work is done once: if the node running it dies before the commit, the entry is still there for the
/// next node; after the commit, it is gone.
public struct LedgerEntry: Sendable, Hashable {
    /// The node that holds the entry now.
    public var owner: String
    /// The entry's key among the owner's.
    public var key: String

    public init(owner: String, key: String) {
        self.owner = owner
        self.key = key
    }
}
