/// What the server asks of the storage about namespaces it has not opened: how big one is (where it
/// loads), which exist (the console's list), and removing one (the console's delete). `hearth serve`
/// passes SQLite's; tests pass their own or ``none``.
public struct NamespaceFiles: Sendable {
    public var bytes: @Sendable (String) -> Int
    public var names: @Sendable () -> [String]
    public var delete: @Sendable (String) throws -> Void

    public init(
        bytes: @escaping @Sendable (String) -> Int, names: @escaping @Sendable () -> [String],
        delete: @escaping @Sendable (String) throws -> Void
    ) {
        self.bytes = bytes
        self.names = names
        self.delete = delete
    }

    /// No files: every namespace is new and empty, nothing is listed, deleting removes nothing stored.
    public static let none = NamespaceFiles(bytes: { _ in 0 }, names: { [] }, delete: { _ in })
}
