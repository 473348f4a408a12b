import Foundation
import HearthAuth
import HearthAuthPostgres
import HearthAuthSQLite
import HearthPostgres
import HearthTesting
import Testing

/// The account stores every store-level test runs against: one test body, each store, the way the
/// storage engines share their conformance suite. A test takes the kind as its argument:
///
///     @Test(arguments: AccountStoreKind.available)
///     func storeKeepsUsers(_ kind: AccountStoreKind) async throws {
///         let store = try await kind.makeStore().store
///     }
enum AccountStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    /// The kinds this machine runs: PostgreSQL is left out with `HEARTH_SKIP_POSTGRES=1`.
    static var available: [AccountStoreKind] { TemporaryPostgres.isSkipped ? [.sqlite] : allCases }

    var testDescription: String { rawValue }

    /// A new, empty store.
    func makeStore() async throws -> TestStore {
        switch self {
        case .sqlite:
            let path = temporaryPath("auth.sqlite")
            return TestStore(store: try SQLiteAccountStore(path: path)) {
                ["", "-wal", "-shm"].compactMap { FileManager.default.contents(atPath: path + $0) }
                    .map { String(decoding: $0, as: UTF8.self) }.joined()
            }
        case .postgres:
            let url = try await AuthPostgres.freshURL()
            // Connecting and making the tables block for a moment: not on the cooperative pool.
            let store = try await offThePool { try PostgresAccountStore(database: PostgresDatabase(url: url, connectionsMax: 2)) }
            return TestStore(store: store) {
                let dump = "SELECT coalesce(string_agg(t::text, E'\\n'), '') FROM %@ t"
                return try ["hearth_auth_users", "hearth_auth_refresh_tokens", "hearth_auth_oob_codes"].map { table in
                    try store.database.query(dump.replacingOccurrences(of: "%@", with: table), doing: "dumping \(table)")
                        .first?.string(at: 0) ?? ""
                }.joined(separator: "\n")
            }
        }
    }
}

/// A store under test, and everything it has written as text (files, or table rows), to check what is
/// never kept in plain text.
struct TestStore: Sendable {
    let store: any AccountStore
    let storedText: @Sendable () throws -> String
}

/// The PostgreSQL of the auth tests: the test process's shared server, with a schema per store, so that
/// stores made by tests running at once see only their own tables.
enum AuthPostgres {
    static func shared() async throws -> TemporaryPostgres { try await TemporaryPostgres.shared() }

    /// A URL on the shared server whose connections see only a new, empty schema (`search_path`).
    static func freshURL() async throws -> String {
        try await url(on: shared())
    }

    /// The same on `server`.
    static func url(on server: TemporaryPostgres) async throws -> String {
        let schema = "auth_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        try await offThePool {
            let database = try PostgresDatabase(url: server.url, connectionsMax: 1)
            defer { database.close() }
            _ = try database.query("CREATE SCHEMA \(schema)", doing: "creating a test schema")
        }
        return server.url + "?options=-csearch_path%3D\(schema)"
    }
}
