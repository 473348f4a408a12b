public import HearthCore
public import HearthStorage

/// The scheduled backups as the console sees them (`hearth serve --backup-every`, docs/operations.md):
/// listed, and one loaded to restore from. The command line provides it (the backups' files and engines
/// are its business); both run off the loop.
public struct BackupCatalogue: Sendable {
    /// One verified backup: its directory's name (`20261205T100200123Z`) and what it holds.
    public struct Listed: Sendable {
        public var name: String
        public var manifest: BackupManifest

        public init(name: String, manifest: BackupManifest) {
            self.name = name
            self.manifest = manifest
        }
    }

    /// Where the backups are.
    public var directory: String
    /// Every namespace's verified backups.
    public var list: @Sendable () -> [Listed]
    /// The namespace as backup `name` of `namespace` holds it (read back and caught up).
    public var load: @Sendable (_ namespace: String, _ name: String) throws -> Node

    public init(directory: String, list: @escaping @Sendable () -> [Listed], load: @escaping @Sendable (String, String) throws -> Node) {
        self.directory = directory
        self.list = list
        self.load = load
    }
}
