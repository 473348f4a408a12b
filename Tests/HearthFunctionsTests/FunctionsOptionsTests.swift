import Testing

@testable import HearthFunctions

struct FunctionsOptionsTests {
    @Test func theCommandLineOverridesTheEnvironment() throws {
        let options = try FunctionsOptions.parse(
            ["--url", "http://127.0.0.1:9100?ns=shop", "--name", "shop-functions", "--concurrency", "8"],
            environment: ["HEARTH_DATABASE_URL": "http://elsewhere:1?ns=x", "HEARTH_ADMIN_TOKEN": "t0ken"])
        #expect(options.databaseURL == "http://127.0.0.1:9100?ns=shop")
        #expect(options.adminToken == "t0ken")
        #expect(options.name == "shop-functions")
        #expect(options.concurrency == 8)
        #expect(ServerAddress(databaseURL: options.databaseURL) == ServerAddress(origin: "http://127.0.0.1:9100", namespace: "shop"))
    }

    @Test func wrongOptionsSayWhatIsWrong() {
        #expect(throws: FunctionsOptions.UsageError(description: "unknown option --nope (see --help)")) {
            try FunctionsOptions.parse(["--nope"], environment: [:])
        }
        #expect(throws: FunctionsOptions.UsageError.self) { try FunctionsOptions.parse(["--concurrency", "0"], environment: [:]) }
        #expect(throws: FunctionsOptions.UsageError.self) { try FunctionsOptions.parse(["--url", "ftp://x?ns=a"], environment: [:]) }
        #expect(throws: FunctionsOptions.UsageError.self) { try FunctionsOptions.parse(["--url", "http://localhost:9000"], environment: [:]) }
    }

    @Test func aFirebaseStyleHostNamesTheNamespace() {
        #expect(ServerAddress(databaseURL: "https://demo.example.com") == ServerAddress(origin: "https://demo.example.com", namespace: "demo"))
    }
}
