import Foundation
import HearthStorage

/// The files of the namespaces under a data directory: `<namespace>.sqlite` with its write-ahead log and
/// shared-memory index. What the server lists, sizes and deletes (the console's Namespaces page).
public struct SQLiteNamespaceFiles: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    private func base(_ namespace: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + namespace + ".sqlite"
    }

    /// Bytes of the database and its write-ahead log (what loading reads); 0 when there is none.
    public func bytes(_ namespace: String) -> Int {
        let base = base(namespace)
        return [base, base + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }

    /// Every namespace with a database file, sorted.
    public func names() -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return entries.compactMap { entry -> String? in
            guard entry.hasSuffix(".sqlite") else { return nil }
            let name = String(entry.dropLast(".sqlite".count))
            return NamespaceName.isValid(name) ? name : nil
        }.sorted()
    }

    /// Removes the namespace's files. Its engine must be closed first.
    public func delete(_ namespace: String) throws {
        let base = base(namespace)
        for file in [base, base + "-wal", base + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.removeItem(atPath: file)
        }
    }
}
