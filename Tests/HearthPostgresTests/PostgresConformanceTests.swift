import HearthCore
import HearthPostgres
import HearthStorage
import HearthStorageTesting
import HearthTesting
import Testing

/// A namespace of its own on the shared test server: each `open` is a restart of the same namespace.
struct PostgresFixture: StorageEngineFixture {
    let url: String
    let namespace: String

    init(server: TemporaryPostgres, namespace: String = PostgresFixture.uniqueNamespace()) {
        url = server.url
        self.namespace = namespace
    }

    func open() throws -> any StorageEngine { try PostgresStorageEngine(url: url, namespace: namespace) }

    static func uniqueNamespace(_ prefix: String = "t") -> String {
        prefix + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
}

@Test("Storage engine conformance: PostgreSQL", .enabled(if: !TemporaryPostgres.isSkipped, "HEARTH_SKIP_POSTGRES=1 was set"), arguments: StorageEngineConformance.caseNames)
func postgresConformance(_ name: String) async throws {
    let fixture = PostgresFixture(server: try await TemporaryPostgres.shared())
    try await StorageEngineConformance.run(name, on: fixture)
}
