import HearthSQL
import HearthCore
import HearthStorage
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// Turns write operations into row changes, reusing one path buffer.
struct RecordWriter {
    let statements: SQLiteStorageEngine.Statements
    var path = EncodedPath()
    var written = 0
    var progress: ((Int) -> Void)?

    init(statements: SQLiteStorageEngine.Statements) { self.statements = statements }

    mutating func apply(_ batch: WriteBatch) throws(SQLiteError) {
        for operation in batch.operations { try apply(operation) }
    }

    mutating func apply(_ operation: WriteBatch.Operation) throws(SQLiteError) {
        switch operation {
        case .removeSubtree(let target):
            if target.isRoot {
                try statements.deleteAll.run()
                return
            }
            let encoded = EncodedPath(target)
            let end = encoded.subtreeEnd
            encoded.bytes.withUnsafeBufferPointer { statements.deleteRange.bind(1, text: $0) }
            end.withUnsafeBufferPointer { statements.deleteRange.bind(2, text: $0) }
            try statements.deleteRange.run()
        case .removeRecord(let target):
            bindPath(statements.deleteOne, EncodedPath(target).bytes)
            try statements.deleteOne.run()
        case .put(let target, let node):
            // The buffer is reused: one allocation per commit rather than one per row.
            path.bytes.removeAll(keepingCapacity: true)
            for key in target.keys { path.append(key) }
            try put(node)
        case .putPriority(let target, let priority):
            bindPath(statements.insert, EncodedPath(target).bytes)
            statements.insert.bindNull(2)
            bind(priority, to: statements.insert)
            try statements.insert.run()
        }
    }

    private func bindPath(_ statement: SQLiteStatement, _ bytes: [UInt8]) {
        if bytes.isEmpty {
            statement.bind(1, text: "")
        } else {
            bytes.withUnsafeBufferPointer { statement.bind(1, text: $0) }
        }
    }

    private func bind(_ priority: Priority?, to statement: SQLiteStatement) {
        switch priority {
        case nil: statement.bindNull(3)
        case .number(let value)?: statement.bind(3, double: value)
        case .string(let value)?: statement.bind(3, text: value)
        }
    }

    /// Writes `node`'s records at `path` (depth first, so rows arrive in key order).
    private mutating func put(_ node: Node) throws(SQLiteError) {
        let insert = statements.insert
        if let leaf = node.leafValue {
            bindPath(insert, path.bytes)
            switch leaf {
            case .bool(let value): insert.bind(2, blob: [value ? 1 : 0])
            case .integer(let value): insert.bind(2, int64: value)
            case .double(let value): insert.bind(2, double: value)
            case .string(let value): insert.bind(2, text: value)
            }
            bind(node.priority, to: insert)
            try insert.run()
            written += 1
            if written % 100_000 == 0 { progress?(written) }
            return
        }
        if let priority = node.priority {
            bindPath(insert, path.bytes)
            insert.bindNull(2)
            bind(priority, to: insert)
            try insert.run()
        }
        var failure: SQLiteError?
        node.children.forEach { key, child in
            let mark = path.bytes.count
            path.append(key)
            do throws(SQLiteError) { try put(child) } catch {
                failure = error
                return false
            }
            path.bytes.removeSubrange(mark...)
            return true
        }
        if let failure { throw failure }
    }
}
