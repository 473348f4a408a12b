import HearthPostgres
import HearthSQLite
import HearthStorage

/// Where the namespaces' data is: SQLite files under the data directory (the default), or with
/// `--storage postgresql://…` (or `HEARTH_STORAGE`) a PostgreSQL database. `hearth serve` and the data
/// commands choose it the same way. A PostgreSQL URL is checked by libpq's parser before anything
/// connects, and never printed: messages name the server through `PostgresEndpoint`, without the
/// password.
enum DataStore: Equatable {
    case sqlite(directory: String)
    case postgres(url: String)

    /// A `--storage` value that is not a PostgreSQL URL; the message never repeats the value, which may
    /// hold a password.
    struct Invalid: Error, Equatable {
        let message: String
    }

    /// PostgreSQL at `storage` when given, else SQLite files under `dataDirectory`.
    static func choose(storage: String?, dataDirectory: String) throws(Invalid) -> DataStore {
        guard let storage, !storage.isEmpty else { return .sqlite(directory: dataDirectory) }
        guard PostgresEndpoint.schemes.contains(where: { storage.hasPrefix($0) }) else {
            throw Invalid(message: "--storage takes a PostgreSQL URL (postgresql://user:password@host:port/dbname), not \(describeScheme(of: storage)); without --storage the data is in SQLite files under --data")
        }
        do { _ = try PostgresEndpoint(url: storage) } catch { throw Invalid(message: "--storage: \(error.message)") }
        return .postgres(url: storage)
    }

    /// "a 'mysql://' URL" when the value starts with a plausible scheme, else "this value".
    private static func describeScheme(of value: String) -> String {
        guard let end = value.range(of: "://") else { return "this value" }
        let scheme = value[..<end.lowerBound]
        let plausible = !scheme.isEmpty && scheme.count <= 20 && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) }
        return plausible ? "a '\(scheme)://' URL" : "this value"
    }

    /// The PostgreSQL server named without its password, or the data directory.
    var location: String {
        switch self {
        case .sqlite(let directory): return directory
        case .postgres(let url): return (try? PostgresEndpoint(url: url).description) ?? "PostgreSQL"
        }
    }

    /// An engine over `namespace`, which must exist (export, backup).
    ///
    /// - Throws: ``StorageError``; `.notFound` naming the namespace and what to check when there is none.
    func openExisting(_ namespace: String) throws(StorageError) -> any StorageEngine {
        switch self {
        case .sqlite(let directory):
            return try SQLiteStorageEngine(directory: directory, namespace: namespace, create: false)
        case .postgres(let url):
            let namespaces = try PostgresNamespaces(url: url)
            guard try namespaces.contains(namespace) else {
                throw StorageError(.notFound, "no namespace '\(namespace)' in PostgreSQL at \(namespaces.endpoint). Check the namespace and --storage (the console's Namespaces page lists them).")
            }
            return try PostgresStorageEngine(url: url, namespace: namespace)
        }
    }

    /// An engine over `namespace` (which must exist) that only reads, beside a running server's: no
    /// check of the whole file on open (a server's open file looks uncleanly closed), and its close
    /// leaves the server's write log alone (a fold would hold the server's writers). Scheduled backups,
    /// `hearth backups list`.
    func openForReading(_ namespace: String) throws(StorageError) -> any StorageEngine {
        switch self {
        case .sqlite(let directory):
            return try SQLiteStorageEngine(directory: directory, namespace: namespace, create: false, verify: .never, foldsOnClose: false)
        case .postgres:
            return try openExisting(namespace)
        }
    }

    /// An engine over `namespace`, made when there is none yet (restore into a new namespace).
    func openCreating(_ namespace: String) throws(StorageError) -> any StorageEngine {
        switch self {
        case .sqlite(let directory):
            return try SQLiteStorageEngine(directory: directory, namespace: namespace)
        case .postgres(let url):
            // Entered in the catalogue first, so the namespace exists (and is listed) even while empty.
            try PostgresNamespaces(url: url).register(namespace)
            return try PostgresStorageEngine(url: url, namespace: namespace)
        }
    }
}
