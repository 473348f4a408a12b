import Dispatch
import Foundation
import HearthAuth
@testable import HearthAuthPostgres
import HearthPostgres
import HearthProtocol
import HearthStorage
import HearthTesting
import Synchronization
import Testing

/// Auth on a cluster: several nodes (here, services in one process) over one PostgreSQL database, each
/// opened the way `hearth serve` opens it (`AuthService.open(postgresURL:)`), must act as one.
///
/// One test at a time: each runs two nodes and several threads, and together they crowded the two cores
/// enough to push the suite's timing-bound PostgreSQL tests (a frozen backend's commit failing within
/// 7 s) over their bounds.
@Suite(.serialized, .enabled(if: !TemporaryPostgres.isSkipped, "HEARTH_SKIP_POSTGRES=1 was set"))
struct PostgresClusterTests {
    static func configuration() -> AuthConfiguration {
        var configuration = AuthConfiguration(projectID: "demo-test", emulator: true, adminToken: nil)
        configuration.passwordHasher = .testing
        return configuration
    }

    /// A node over `url`, opened off the cooperative pool (it connects and may make a key).
    static func node(_ url: String) async throws -> Harness {
        try await offThePool { Harness(service: try AuthService.open(postgresURL: url, configuration: configuration())) }
    }

    /// Calls `body` until it returns true or `limit` passes; returns whether it did, and after how long.
    /// Sleeps between calls without holding a thread of the cooperative pool (other tests' waits run on it).
    static func eventually(within limit: Duration = .seconds(3), _ body: () throws -> Bool) async rethrows -> (Bool, Duration) {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if try body() { return (true, ContinuousClock.now - start) }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return (try body(), ContinuousClock.now - start)
    }

    @Test func aUserOfOneNodeSignsInRefreshesAndIsCheckedOnTheOther() async throws {
        let url = try await AuthPostgres.freshURL()
        let a = try await Self.node(url), b = try await Self.node(url)
        #expect(a.service.key.keyID == b.service.key.keyID, "both nodes sign with the key the first one made")

        let signUp = a.client("signUp", ["email": "ann@example.com", "password": "secret123", "returnSecureToken": true])
        let uid = try #require(signUp.json["localId"] as? String)
        let signIn = b.client("signInWithPassword", ["email": "ann@example.com", "password": "secret123", "returnSecureToken": true])
        #expect(signIn.status == 200 && signIn.json["localId"] as? String == uid)

        // An ID token from one node verifies on the other, with the account checked there.
        let idToken = try #require(signUp.json["idToken"] as? String)
        #expect(try b.service.authenticate(idToken: idToken).uid == uid)
        #expect(try a.service.authenticate(idToken: #require(signIn.json["idToken"] as? String)).uid == uid)
        let lookup = b.client("lookup", ["idToken": idToken])
        #expect((lookup.json["users"] as? [[String: Any]])?.first?["email"] as? String == "ann@example.com")

        // A refresh token from one node refreshes on the other.
        let refreshToken = try #require(signUp.json["refreshToken"] as? String)
        let refreshed = b.refresh(refreshToken)
        #expect(refreshed.status == 200 && refreshed.json["user_id"] as? String == uid)
        #expect(try a.service.verifier.verify(#require(refreshed.json["id_token"] as? String)).uid == uid)

        // Disabled on one node, refused by the other: its store's cache drops the account when the change's
        // notification arrives, and the loop's answer (AccountVerdicts) is read again once over a second old.
        let issuedAt = try b.service.verifier.verify(idToken).issuedAt
        #expect(b.service.accountAllows(uid: uid, issuedAt: issuedAt))
        let disabled = a.post(
            "/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts:update", ["localId": uid, "disableUser": true], admin: true)
        #expect(disabled.status == 200)
        let (seen, after) = await Self.eventually { !b.service.accountAllows(uid: uid, issuedAt: issuedAt) }
        #expect(seen, "the other node still accepts a disabled account's token after \(after)")
        #expect(errorMessage(b.refresh(refreshToken).json) == "USER_DISABLED")
        #expect(errorMessage(b.client("signInWithPassword", ["email": "ann@example.com", "password": "secret123"]).json) == "USER_DISABLED")
    }

    @Test func concurrentSignUpsOfOneEmailOnTwoNodesMakeOneAccount() async throws {
        let url = try await AuthPostgres.freshURL()
        let nodes = [try await Self.node(url), try await Self.node(url)]
        let outcomes = await offThePool { () -> [[String]] in
            (0..<12).map { round in
                let answers = Mutex<[String]>([])
                DispatchQueue.concurrentPerform(iterations: 2) { index in
                    let response = nodes[index].client("signUp", ["email": "race\(round)@example.com", "password": "secret123"])
                    let answer = response.status == 200 ? "OK" : errorMessage(response.json) ?? "status \(response.status)"
                    answers.withLock { $0.append(answer) }
                }
                return answers.withLock { $0.sorted() }
            }
        }
        for (round, answers) in outcomes.enumerated() {
            #expect(answers == ["EMAIL_EXISTS", "OK"], "round \(round)")
        }
        #expect(try nodes[0].service.store.userCount() == 12)
    }

    @Test func nodesStartingTogetherMakeOneSigningKey() async throws {
        let url = try await AuthPostgres.freshURL()
        let keyIDs = try await offThePool { () throws -> [String] in
            let found = Mutex<[Result<String, any Error>]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                let keyID = Result { () throws -> String in
                    let database = try PostgresDatabase(url: url, connectionsMax: 1)
                    defer { database.close() }
                    return try SigningKey.loadOrCreate(in: database).keyID
                }
                found.withLock { $0.append(keyID) }
            }
            return try found.withLock { $0 }.map { try $0.get() }
        }
        #expect(keyIDs.count == 4 && Set(keyIDs).count == 1)
        let later = try await Self.node(url)
        #expect(later.service.key.keyID == keyIDs.first)
    }

    @Test func signInMethodsChangedOnOneNodeReachTheOther() async throws {
        let url = try await AuthPostgres.freshURL()
        let a = try await Self.node(url), b = try await Self.node(url)
        let patch = a.service.handle(HTTPRequest(
            method: .patch, path: "/identitytoolkit.googleapis.com/admin/v2/projects/demo-test/config",
            headers: ["content-type": "application/json", "authorization": "Bearer owner"],
            body: Array(#"{"signIn":{"anonymous":{"enabled":false}}}"#.utf8)))
        #expect(patch.status == 200)
        let (refused, after) = await Self.eventually { errorMessage(b.client("signUp", [:]).json) == "ADMIN_ONLY_OPERATION" }
        #expect(refused, "the other node still allows anonymous sign-up after \(after)")
        #expect(after < .seconds(2))
        // A node started later reads them too.
        #expect(errorMessage(try await Self.node(url).client("signUp", [:]).json) == "ADMIN_ONLY_OPERATION")
    }

    /// `modify` holds the account's row from its read to its write, so changes from two nodes at once are
    /// never lost.
    @Test func changesToOneAccountFromTwoStoresAtOnceAreAllKept() async throws {
        let url = try await AuthPostgres.freshURL()
        let stores = try await offThePool { try [PostgresAccountStore(url: url), PostgresAccountStore(url: url)] }
        try stores[0].insert(UserRecord(localId: "counter", createdAt: 1))
        let failures = await offThePool { () -> [String] in
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                for _ in 0..<25 {
                    do {
                        try stores[index % 2].modify(id: "counter") { user in
                            user.displayName = String((Int(user.displayName ?? "0") ?? 0) + 1)
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
            return failures.withLock { $0 }
        }
        #expect(failures.isEmpty)
        #expect(try stores[1].user(id: "counter")?.displayName == "100")
    }

    /// Reads by id come from the cache while nothing changed, and a change made through another store is
    /// seen as soon as its notification arrives.
    @Test func accountsCachedByOneStoreAreDroppedWhenAnotherChangesThem() async throws {
        let url = try await AuthPostgres.freshURL()
        let (writer, reader) = try await offThePool { (try PostgresAccountStore(url: url), try PostgresAccountStore(url: url)) }
        // A uid of its own: other tests' changes to their "ann" notify this listener too (one channel).
        let uid = "ann-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        var ann = UserRecord(localId: uid, createdAt: 1)
        ann.displayName = "one"
        try writer.insert(ann)
        #expect(await Self.eventually { reader.cache.isTrusted }.0, "the reader's listener never started")
        #expect(try reader.user(id: uid)?.displayName == "one")

        // A change that notifies nobody (triggers off for this session) shows the cache is read.
        _ = try writer.database.run(
            [
                PostgresStatement("SET LOCAL session_replication_role = replica"),
                PostgresStatement(
                    "UPDATE hearth_auth_users SET record = replace(record, '\"one\"', '\"unseen\"') WHERE uid = $1", [.text(uid)]),
            ], doing: "changing an account behind the caches' backs")
        let stored = try writer.database.query("SELECT record FROM hearth_auth_users WHERE uid = $1", [.text(uid)], doing: "reading")
        #expect(try stored.first?.string(at: 0)?.contains("unseen") == true)
        #expect(try reader.user(id: uid)?.displayName == "one")

        try writer.modify(id: uid) { $0.displayName = "two" }
        let (seen, after) = try await Self.eventually { try reader.user(id: uid)?.displayName == "two" }
        #expect(seen, "the reader still has the old account after \(after)")
        try writer.delete(id: uid)
        #expect(try await Self.eventually { try reader.user(id: uid) == nil }.0)
    }

    /// More threads than connections on one store share its few connections.
    @Test func oneStoreServesManyThreadsOnABoundedPool() async throws {
        let url = try await AuthPostgres.freshURL()
        let store = try await offThePool { try PostgresAccountStore(database: PostgresDatabase(url: url, connectionsMax: 2)) }
        let failures = await offThePool { () -> Int in
            let failed = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 5) { thread in
                for index in 0..<40 {
                    do {
                        var user = UserRecord(localId: "u\(thread)-\(index)", createdAt: 1)
                        user.email = "u\(thread)-\(index)@example.com"
                        try store.insert(user)
                        guard try store.user(email: user.email ?? "")?.localId == user.localId else { throw StorageError(.corrupt, "wrong user") }
                        try store.modify(id: user.localId) { $0.emailVerified = true }
                    } catch {
                        failed.add(1, ordering: .relaxed)
                    }
                }
            }
            return failed.load(ordering: .relaxed)
        }
        #expect(failures == 0)
        #expect(try store.userCount() == 200)
        #expect(store.database.connectionsOpened <= 2)
    }

    /// A stopped PostgreSQL: calls fail within seconds with a message that says what to do (and no
    /// password), the HTTP API answers Firebase's INTERNAL at once, and all of it works again once
    /// PostgreSQL is back.
    @Test func aStoppedPostgresFailsClearlyWithinSecondsAndRecovers() async throws {
        let server = try await TemporaryPostgres.make()
        defer { server.destroy() }
        let node = try await Self.node(server.url)
        let uid = try #require(node.client("signUp", ["email": "ann@example.com", "password": "secret123"]).json["localId"] as? String)
        #expect(try node.service.store.user(id: uid) != nil)

        try await offThePool { try server.stop() }
        let start = ContinuousClock.now
        #expect {
            _ = try node.service.store.user(email: "ann@example.com")
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .unavailable && error.message.contains("127.0.0.1:\(server.port)")
                && error.message.contains("start PostgreSQL") && !error.message.contains(server.password)
        }
        #expect(ContinuousClock.now - start < .seconds(6))
        let answer = node.client("signInWithPassword", ["email": "ann@example.com", "password": "secret123"])
        #expect(answer.status == 500 && (answer.json["error"] as? [String: Any])?["status"] as? String == "INTERNAL")
        // The cache is not trusted once its listener lost PostgreSQL: the account is not answered from it.
        #expect(await Self.eventually { (try? node.service.store.user(id: uid)) == nil }.0)
        // The server asks this on its event loop: it answers from memory at once, never waiting for the
        // stopped PostgreSQL (a verified token of an account not read yet is let in; see AccountVerdicts).
        let asked = ContinuousClock.now
        _ = node.service.accountAllows(uid: uid, issuedAt: .max)
        #expect(ContinuousClock.now - asked < .milliseconds(50))
        #expect(ContinuousClock.now - start < .seconds(10))

        try await offThePool { try server.start() }
        let (back, after) = await Self.eventually(within: .seconds(10)) {
            node.client("signInWithPassword", ["email": "ann@example.com", "password": "secret123"]).status == 200
        }
        #expect(back, "still failing \(after) after PostgreSQL started")
        #expect(try node.service.store.user(id: uid) != nil)
    }
}
