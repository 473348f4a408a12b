import HearthCore
import HearthStorage

extension StoredRecord {
    /// Calls `body` with the path and record of each of `node`'s records at `path`, in path order: one
    /// per leaf, one marker per inner node with a priority (the rows `hearth_records` holds for it).
    static func forEach<Failure: Error>(
        in node: Node, at path: inout EncodedPath, _ body: ([UInt8], StoredRecord) throws(Failure) -> Void
    ) throws(Failure) {
        if let leaf = node.leafValue {
            try body(path.bytes, StoredRecord(leaf: leaf, priority: node.priority))
            return
        }
        if let priority = node.priority { try body(path.bytes, StoredRecord(leaf: nil, priority: priority)) }
        var failure: Failure?
        node.children.forEach { key, child in
            let mark = path.bytes.count
            path.append(key)
            defer { path.bytes.removeSubrange(mark...) }
            do throws(Failure) { try forEach(in: child, at: &path, body) } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
    }
}
