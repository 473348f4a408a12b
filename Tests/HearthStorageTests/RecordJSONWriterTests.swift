import HearthCore
import HearthStorage
import Synchronization
import Testing

/// The export written straight from records, as PostgreSQL's streamed export writes it: it must parse to
/// the tree the same records build.
@Suite struct RecordJSONWriterTests {
    typealias Record = (path: [UInt8], leaf: Node?, priority: Priority?)

    /// The records an engine keeps for `root` (a leaf each, a marker per prioritized inner node), in
    /// byte order, as a load reads them.
    static func records(of root: Node) -> [Record] {
        var records: [Record] = []
        func walk(_ node: Node, _ path: EncodedPath) {
            if node.isLeaf {
                records.append((path.bytes, node.withPriority(nil), node.priority))
                return
            }
            if let priority = node.priority { records.append((path.bytes, nil, priority)) }
            node.children.forEach { key, child in
                var below = path
                below.append(key)
                walk(child, below)
                return true
            }
        }
        if !root.isEmpty { walk(root, EncodedPath()) }
        return records.sorted { $0.path.lexicographicallyPrecedes($1.path) }
    }

    static func export(_ records: [Record], chunkByteCount: Int = 1 << 20) throws -> (text: String, writes: Int) {
        let written = Mutex<([UInt8], Int)>(([], 0))
        var writer = RecordJSONWriter(chunkByteCount: chunkByteCount) { chunk in
            written.withLock {
                $0.0 += chunk
                $0.1 += 1
            }
        }
        for record in records {
            try record.path.withUnsafeBufferPointer { path throws(StorageError) in try writer.add(path: path, leaf: record.leaf, priority: record.priority) }
        }
        try writer.finish()
        return written.withLock { (String(decoding: $0.0, as: UTF8.self), $0.1) }
    }

    static let trees: [String] = [
        #"{"users": {"ada": {"name": "Ada", "born": 1815, ".priority": 2}, "bob": {"name": "Bob"}}, "flags": {"on": true}, "list": {"0": "a", "1": "b", "10": "c", "9": "d", "-1": "e"}, "pi": 3.14, "str": {".value": "x", ".priority": "p"}, "ключ": {"x": false}, "esc": {"q\"uote": "line\nbreak", "tab\t": "\u0007"}, "deep": {"a": {"b": {"c": {"d": 1}}}, "a2": 2}}"#,
        #"{".priority": 1, "a": 1, "b": {".priority": "x", "c": {".value": 3, ".priority": 4}}}"#,
        #"5"#,
        #"{".value": "root", ".priority": 9}"#,
        #"null"#,
    ]

    @Test(arguments: trees)
    func theExportParsesToTheTreeTheRecordsBuild(json: String) throws {
        let root = try Node(json: json)
        let records = Self.records(of: root)
        var builder = RecordTreeBuilder()
        for record in records {
            try record.path.withUnsafeBufferPointer { path throws(StorageError) in try builder.add(path: path, leaf: record.leaf, priority: record.priority) }
        }
        #expect(try builder.finish() == root)
        let (text, _) = try Self.export(records)
        #expect(try Node(json: text) == root, "\(text)")
        #expect(text.hasSuffix("\n"))
        // In small chunks, the same bytes.
        let chunked = try Self.export(records, chunkByteCount: 16)
        #expect(chunked.text == text)
        #expect(root.isEmpty || records.count < 3 || chunked.writes > 2)
    }

    @Test func recordsHearthNeverWritesAreCorruptNotAnExport() {
        let bad: [[Record]] = [
            [(Array("a\u{1}".utf8), Node(1), nil), (Array("a\u{1}b\u{1}".utf8), Node(2), nil)],  // a value and children
            [(Array("a\u{1}b\u{1}".utf8), Node(2), nil), (Array("a\u{1}".utf8), nil, .number(1))],  // a marker after children
            [([], Node(1), nil), (Array("a\u{1}".utf8), Node(2), nil)],  // a root value and children
            [(Array("a".utf8), Node(1), nil)],  // no separator at the end
        ]
        for records in bad {
            #expect(throws: StorageError.self) { try Self.export(records) }
        }
    }
}
