@testable import HearthPostgres
import HearthStorage
import HearthTesting
import Testing

@Suite(.enabled(if: !TemporaryPostgres.isSkipped, "HEARTH_SKIP_POSTGRES=1 was set"))
struct PostgresRulesStoreTests {
    @Test func versionsAreNumberedKeptInOrderAndTrimmed() async throws {
        let server = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("rules")
        let versions = try await offThePool {
            let store = try PostgresRulesStore(url: server.url)
            var numbers: [Int] = []
            for index in 1...5 {
                let json = #"{"rules":{".read":\#(index % 2 == 0)}}"#
                numbers.append(try store.append(
                    to: namespace, rules: json, format: index == 5 ? "bolt" : "json", source: index == 5 ? "path / { read() { true } }" : json,
                    deployedAt: Int64(index), keeping: 3))
            }
            #expect(numbers == [1, 2, 3, 4, 5])
            // Another store (another server, or after a restart) reads the same.
            return try PostgresRulesStore(url: server.url).versions(of: namespace)
        }
        #expect(versions.map(\.number) == [3, 4, 5], "the newest three are kept")
        #expect(versions.map(\.deployedAt) == [3, 4, 5])
        let newest = try #require(versions.last)
        #expect(newest.format == "bolt" && newest.source == "path / { read() { true } }" && newest.rules == #"{"rules":{".read":false}}"#)
        try await offThePool { try PostgresRulesStore(url: server.url).delete(namespace) }
        #expect(try await offThePool { try PostgresRulesStore(url: server.url).versions(of: namespace) }.isEmpty)
    }

    @Test func twoStoresDeployingAtOnceNumberTheirVersionsOneAfterTheOther() async throws {
        let server = try await TemporaryPostgres.shared()
        let namespace = PostgresFixture.uniqueNamespace("race")
        async let first = offThePool { try (0..<10).map { _ in try PostgresRulesStore(url: server.url).append(to: namespace, rules: "{}", format: "json", source: "{}", deployedAt: 0, keeping: 50) } }
        async let second = offThePool { try (0..<10).map { _ in try PostgresRulesStore(url: server.url).append(to: namespace, rules: "{}", format: "json", source: "{}", deployedAt: 0, keeping: 50) } }
        let numbers = try await first + second
        #expect(numbers.sorted() == Array(1...20))
    }

    @Test func rulesHoldingANulAreRefusedWithAReason() async throws {
        let server = try await TemporaryPostgres.shared()
        do {
            _ = try await offThePool {
                try PostgresRulesStore(url: server.url).append(to: "nul", rules: "{}", format: "json", source: "{/*\u{0}*/}", deployedAt: 0, keeping: 50)
            }
            Issue.record("a NUL was stored")
        } catch let error as StorageError {
            #expect(error.code == .invalidData && error.message.contains("NUL"))
        }
    }
}
