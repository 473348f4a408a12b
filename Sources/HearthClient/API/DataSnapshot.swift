public import Foundation
package import HearthCore

/// An immutable copy of the data at a location, as `DataSnapshot` in FirebaseDatabase: `value` as
/// Foundation types (`[String: Any]`, `[Any]`, `String`, `NSNumber`, `NSNull` when nothing is there),
/// children in the query's order.
open class DataSnapshot: NSObject, @unchecked Sendable {  // immutable
    let node: Node
    let location: Path
    let index: QueryIndex
    private let database: Database?

    /// An empty snapshot of nothing (as Firebase's API allows).
    public override init() {
        node = .empty
        location = .root
        index = .priority
        database = nil
        super.init()
    }

    init(database: Database?, path: Path, node: Node, index: QueryIndex = .priority) {
        self.database = database
        location = path
        self.node = node
        self.index = index
        super.init()
    }

    /// A snapshot of `node` at `path` of `database`, made outside a query (HearthFunctions' events).
    package convenience init(in database: Database?, at path: Path, of node: Node) {
        self.init(database: database, path: path, node: node)
    }

    /// The data, without priorities; `NSNull` when the location is empty.
    open var value: Any? { FoundationValues.value(of: node) }

    /// The data with priorities (`.priority`, and `.value` for leaves that have one).
    open func valueInExportFormat() -> Any? { FoundationValues.value(of: node, exportFormat: true) }

    /// The priority, or `NSNull` when there is none (as FirebaseDatabase's).
    open var priority: Any? { FoundationValues.priority(of: node) ?? NSNull() }

    open func exists() -> Bool { !node.isEmpty }

    open func hasChildren() -> Bool { node.hasChildren }

    open var childrenCount: UInt { UInt(node.childCount) }

    open func hasChild(_ childPathString: String) -> Bool {
        !node.child(at: Path(childPathString)).isEmpty
    }

    open func childSnapshot(forPath childPathString: String) -> DataSnapshot {
        let path = Path(childPathString)
        return DataSnapshot(database: database, path: location.appending(path: path), node: node.child(at: path))
    }

    /// The last key of the location; `""` at the root.
    open var key: String { location.last?.string ?? "" }

    open var ref: DatabaseReference {
        guard let database else { return DatabaseReference() }
        return DatabaseReference(database: database, path: location)
    }

    /// The children as snapshots, in the order of the query the snapshot came from.
    open var children: NSEnumerator {
        NSArray(array: childSnapshots).objectEnumerator()
    }

    /// The children in query order.
    var childSnapshots: [DataSnapshot] {
        var entries: [(key: ChildKey, node: Node)] = []
        node.children.forEach { key, child in
            entries.append((key, child))
            return true
        }
        if case .key = index {} else {
            entries.sort { a, b in
                let order = ValueOrder.compare(index.indexValue(of: a.node), index.indexValue(of: b.node))
                return order != 0 ? order < 0 : a.key < b.key
            }
        }
        return entries.map { DataSnapshot(database: database, path: location.appending($0.key), node: $0.node) }
    }

    open override var description: String {
        "Snap (\(key)) \(node.json(.export))"
    }
}
