import Dispatch
import Foundation
import HearthCore
import HearthProtocol
import HearthStorage
import HearthTesting
import Synchronization
import Testing

@testable import HearthServer

/// What the registry does with storage that waits (a PostgreSQL a round trip away, or not answering):
/// the loop (a `QueuedExecutor` the test drains) keeps serving while rules are saved, namespaces open
/// and namespaces are deleted elsewhere.
struct NamespaceStorageTests {
    /// A server whose loop is the test's own: queued work runs when the test drains it.
    struct Harness {
        let server: DatabaseServer
        let loop = QueuedExecutor()

        init(emulator: Bool = true, rules: RulesStorage = .inMemory(), files: NamespaceFiles = .none,
             openEngine: @escaping @Sendable (String) throws -> any StorageEngine = { _ in InMemoryStorageEngine() }) {
            server = DatabaseServer(
                configuration: ServerConfiguration(emulator: emulator, adminToken: nil, defaultNamespace: "demo"),
                rules: rules, files: files, openEngine: openEngine)
            server.loopStarted(executor: loop)
        }

        /// Sends a request; returns its responder at once (answered or not).
        func start(_ method: HTTPRequest.Method, _ path: String, ns: String = "demo", body: String = "", owner: Bool = false) -> RecordingResponder {
            let responder = RecordingResponder()
            server.handle(
                HTTPRequest(method: method, path: path, queryItems: [("ns", ns)], headers: owner ? ["authorization": "Bearer owner"] : [:],
                            body: Array(body.utf8)),
                responder: responder)
            return responder
        }

        /// Turns the loop until `responder` is answered, waiting for work handed over from other threads.
        func answer(_ responder: RecordingResponder) async throws -> HTTPResponse {
            while responder.response == nil, loop.drainWhenQueued() > 0 {}
            return try #require(responder.response, "no answer, and nothing more came to the loop")
        }

        func send(_ method: HTTPRequest.Method, _ path: String, ns: String = "demo", body: String = "", owner: Bool = false) async throws -> HTTPResponse {
            try await answer(start(method, path, ns: ns, body: body, owner: owner))
        }
    }

    /// A gate a storage call waits at until the test opens it.
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func wait() { semaphore.wait() }
        func open() { semaphore.signal() }
    }

    static let denyReads = #"{"rules":{".read":false,".write":true}}"#

    @Test func rulesApplyOnlyOnceStoredAndTheLoopServesMeanwhile() async throws {
        let gate = Gate()
        let memory = RulesStorage.inMemory()
        let slow = RulesStorage(load: memory.load, save: { gate.wait(); return try memory.save($0, $1, $2) }, delete: memory.delete)
        let harness = Harness(rules: slow)
        #expect(try await harness.send(.put, "/x.json", body: "1").status == 200)
        let deploy = harness.start(.put, "/.settings/rules.json", body: Self.denyReads, owner: true)
        // The save waits; the old rules (open) still decide, and other requests are answered.
        #expect(try await harness.send(.get, "/x.json").status == 200)
        #expect(deploy.response == nil)
        gate.open()
        #expect(try await harness.answer(deploy).status == 200)
        #expect(try await harness.send(.get, "/x.json").status == 401)
        #expect(harness.server.namespaces.history("demo").map(\.version) == [1])
        #expect(try memory.load("demo").rules == Self.denyReads)
    }

    @Test func aRulesSaveThatFailsChangesNothing() async throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "PostgreSQL is down" } }
        let refusing = RulesStorage(load: { _ in StoredRules() }, save: { _, _, _ in throw Refused() }, delete: { _ in })
        let harness = Harness(rules: refusing)
        let deployed = try await harness.send(.put, "/.settings/rules.json", body: Self.denyReads, owner: true)
        #expect(deployed.status == 500)
        #expect(deployed.bodyText.contains("PostgreSQL is down"))
        #expect(try await harness.send(.get, "/x.json").status == 200, "the old rules still apply")
        #expect(harness.server.namespaces.history("demo").isEmpty)
    }

    @Test func storedRulesAndTheirHistoryAreReadWhenANamespaceOpens() async throws {
        var stored = StoredRules()
        stored.add(#"{"rules":{".read":true}}"#, RulesDeployment(format: .json, source: #"{"rules":{".read":true}}"#, deployedAt: 1))
        stored.add(Self.denyReads, RulesDeployment(format: .bolt, source: "path / { read() { false } }", deployedAt: 2))
        let found = stored
        let harness = Harness(rules: RulesStorage(load: { _ in found }, save: { _, _, _ in 3 }, delete: { _ in }))
        #expect(try await harness.send(.get, "/x.json").status == 401)
        #expect(harness.server.namespaces.history("demo").map(\.version) == [1, 2])
        #expect(harness.server.namespaces.history("demo").last?.format == .bolt)
    }

    @Test func rulesThatCannotBeReadFailTheOpenRatherThanServeTheDefaults() async throws {
        struct Unreadable: Error {}
        let harness = Harness(rules: RulesStorage(load: { _ in throw Unreadable() }, save: { _, _, _ in 1 }, delete: { _ in }))
        let refused = try await harness.send(.get, "/x.json")
        #expect(refused.status == 500)
        #expect(refused.bodyText.contains("rules"))
        #expect(harness.server.namespaces["demo"] == nil)
    }

    @Test func overTheNetworkEveryNamespaceOpensOffTheLoop() async throws {
        let gate = Gate()
        let files = NamespaceFiles(bytes: { _ in 0 }, names: { [] }, delete: { _ in }, opensOverNetwork: true)
        let harness = Harness(files: files, openEngine: { name in
            if name == "slow" { gate.wait() }
            return InMemoryStorageEngine()
        })
        let waiting = harness.start(.get, "/x.json", ns: "slow")
        #expect(try await harness.send(.put, "/y.json", ns: "quick", body: "1").status == 200)
        #expect(waiting.response == nil)
        gate.open()
        #expect(try await harness.answer(waiting).bodyText == "null")
    }

    @Test func aNamespaceBeingDeletedIsNotOpenedUntilItsDataIsGone() async throws {
        let gate = Gate()
        let deleted = Mutex<[String]>([])
        let files = NamespaceFiles(bytes: { _ in 0 }, names: { [] }, delete: { name in
            gate.wait()
            deleted.withLock { $0.append(name) }
        })
        let memory = RulesStorage.inMemory()
        let harness = Harness(rules: memory, files: files)
        #expect(try await harness.send(.put, "/x.json", ns: "shop", body: "1").status == 200)
        #expect(try await harness.send(.put, "/.settings/rules.json", ns: "shop", body: Self.denyReads, owner: true).status == 200)
        let registry = harness.server.namespaces
        let result = Mutex<Bool?>(nil)
        registry.delete("shop") { outcome in
            let succeeded = if case .success = outcome { true } else { false }
            result.withLock { $0 = succeeded }
        }
        #expect(registry.isDeleting("shop") && registry.exists("shop") && registry["shop"] == nil)
        let meanwhile = try await harness.send(.get, "/x.json", ns: "shop")
        #expect(meanwhile.status == 404 && meanwhile.bodyText.contains("being deleted"))
        #expect(try await harness.send(.get, "/x.json", ns: "other").status == 200, "the loop serves others meanwhile")
        gate.open()
        while result.withLock({ $0 == nil }), harness.loop.drainWhenQueued() > 0 {}
        #expect(result.withLock { $0 } == true)
        #expect(deleted.withLock { $0 } == ["shop"])
        #expect(try memory.load("shop") == StoredRules(), "its rules went with it")
        #expect(!registry.isDeleting("shop"))
        // Opened again, it is new: empty, and under the default rules.
        #expect(try await harness.send(.get, "/x.json", ns: "shop").bodyText == "null")
    }

    @Test func rulesFilesKeepTheRulesAndNumberedVersionsAcrossRestarts() throws {
        let directory = NSTemporaryDirectory() + "hearth-rules-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = RulesStorage.files(directory: directory, log: .silent)
        for index in 1...(RulesStorage.versionsMax + 2) {
            let number = try files.save("shop", Self.denyReads, RulesDeployment(format: .json, source: "v\(index)", deployedAt: Int64(index)))
            #expect(number == index)
        }
        let reopened = try RulesStorage.files(directory: directory, log: .silent).load("shop")
        #expect(reopened.rules == Self.denyReads)
        #expect(reopened.versions.count == RulesStorage.versionsMax)
        #expect(reopened.versions.first?.version == 3 && reopened.versions.last?.source == "v\(RulesStorage.versionsMax + 2)")
        try files.delete("shop")
        #expect(try files.load("shop") == StoredRules())
    }
}
