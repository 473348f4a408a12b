/// What the server asks of the storage about namespaces it has not opened: how big one is (where it
/// loads), whether it exists and which do (the console's list), and removing one (the console's
/// delete). `hearth serve` passes SQLite's files, or with `--storage` a PostgreSQL catalogue; tests
/// pass their own or ``none``.
///
/// `bytes`, `exists` and `names` are called on the event loop, so they must answer at once (a file's
/// size, or a catalogue kept in memory); `delete` is called off the loop and may wait.
public struct NamespaceFiles: Sendable {
    public var bytes: @Sendable (String) -> Int
    public var names: @Sendable () -> [String]
    public var exists: @Sendable (String) -> Bool
    public var delete: @Sendable (String) throws -> Void
    /// True when opening a namespace waits on the network (PostgreSQL): every namespace then opens and
    /// loads on a thread of its own, however small, because a connect may take seconds.
    public var opensOverNetwork: Bool

    /// - Parameter exists: whether a namespace is stored; by default, when it has bytes.
    public init(
        bytes: @escaping @Sendable (String) -> Int, names: @escaping @Sendable () -> [String],
        exists: (@Sendable (String) -> Bool)? = nil, delete: @escaping @Sendable (String) throws -> Void,
        opensOverNetwork: Bool = false
    ) {
        self.bytes = bytes
        self.names = names
        self.exists = exists ?? { bytes($0) > 0 }
        self.delete = delete
        self.opensOverNetwork = opensOverNetwork
    }

    /// No files: every namespace is new and empty, nothing is listed, deleting removes nothing stored.
    public static let none = NamespaceFiles(bytes: { _ in 0 }, names: { [] }, delete: { _ in })
}
