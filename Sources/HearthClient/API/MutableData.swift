public import Foundation
import HearthCore

/// The value a transaction's update block reads and changes, as `MutableData` in FirebaseDatabase.
/// Children from `childData(byAppendingPath:)` write through to the transaction's value.
open class MutableData: NSObject, @unchecked Sendable {  // used by one transaction run at a time
    final class Root {
        var node: Node
        var invalid: String?
        init(_ node: Node) { self.node = node }
    }

    let root: Root
    let path: Path

    public override init() {
        root = Root(.empty)
        path = .root
        super.init()
    }

    init(node: Node) {
        root = Root(node)
        path = .root
        super.init()
    }

    private init(root: Root, path: Path) {
        self.root = root
        self.path = path
        super.init()
    }

    private var node: Node { root.node.child(at: path) }

    /// The value here as Foundation types (`NSNull` when empty); setting it replaces it (keeping no
    /// priority unless the value has one).
    open var value: Any? {
        get { FoundationValues.value(of: node) }
        set {
            do {
                let replacement = try FoundationValues.node(from: newValue, at: path)
                root.node.set(path, to: replacement)
            } catch {
                root.invalid = error.message
            }
        }
    }

    open var priority: Any? {
        get { FoundationValues.priority(of: node) ?? NSNull() }
        set {
            do {
                let leaf = try FoundationValues.leaf(from: newValue)
                root.node.set(path.appending(.priorityKey), to: leaf)
            } catch {
                root.invalid = error.message
            }
        }
    }

    open func hasChildren() -> Bool { node.hasChildren }

    open func hasChild(atPath path: String) -> Bool { !node.child(at: Path(path)).isEmpty }

    open func childData(byAppendingPath path: String) -> MutableData {
        MutableData(root: root, path: self.path.appending(path: Path(path)))
    }

    open var childrenCount: UInt { UInt(node.childCount) }

    open var children: NSEnumerator {
        var children: [MutableData] = []
        node.children.forEach { key, _ in
            children.append(MutableData(root: root, path: path.appending(key)))
            return true
        }
        return NSArray(array: children).objectEnumerator()
    }

    open var key: String? { path.last?.string }
}

/// What a transaction's update block decides, as `TransactionResult` in FirebaseDatabase.
open class TransactionResult: NSObject, @unchecked Sendable {  // immutable
    let data: MutableData?

    public override init() {
        data = nil
        super.init()
    }

    private init(data: MutableData?) {
        self.data = data
        super.init()
    }

    /// Commit `value` (the block's `MutableData`, changed or not).
    open class func success(withValue value: MutableData) -> TransactionResult { TransactionResult(data: value) }

    /// Leave the data as it is and end the transaction (its completion reports not committed).
    open class func abort() -> TransactionResult { TransactionResult(data: nil) }
}

/// Placeholders the server replaces when it applies a write, as `ServerValue` in FirebaseDatabase.
open class ServerValue: NSObject, @unchecked Sendable {
    /// The server's time in milliseconds since 1970.
    open class func timestamp() -> [AnyHashable: Any] { [".sv": "timestamp"] }

    /// The number there plus `delta` (or `delta` when there is none), atomically on the server.
    open class func increment(_ delta: NSNumber) -> [AnyHashable: Any] { [".sv": ["increment": delta]] }
}
