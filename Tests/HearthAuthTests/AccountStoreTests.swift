import Foundation
import HearthAuth
import HearthAuthSQLite
import HearthSQL
import HearthTesting
import Synchronization
import Testing

func temporaryPath(_ name: String) -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-auth-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent(name).path
}

@Test(arguments: AccountStoreKind.available)
func storeKeepsUsersTokensAndCodes(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let store = try await kind.makeStore().store
        var ann = UserRecord(localId: "ann", createdAt: 1_700_000_000_000)
        ann.email = "ann@example.com"
        ann.password = .argon2id("$argon2id$fake")
        try store.insert(ann)
        #expect(try store.user(id: "ann") == ann)
        #expect(try store.user(email: "ann@example.com")?.localId == "ann")

        var clash = UserRecord(localId: "other", createdAt: 1)
        clash.email = "ann@example.com"
        #expect(throws: AccountStoreConflict.self) { try store.insert(clash) }
        #expect(throws: AccountStoreConflict.self) { try store.insert(UserRecord(localId: "ann", createdAt: 1)) }

        ann.displayName = "Ann"
        try store.update(ann)
        #expect(try store.user(id: "ann")?.displayName == "Ann")
        try store.insert(UserRecord(localId: "bob", createdAt: 2))
        #expect(try store.users(after: nil, limit: 10).map(\.localId) == ["ann", "bob"])
        #expect(try store.users(after: "ann", limit: 10).map(\.localId) == ["bob"])
        #expect(try store.userCount() == 2)

        let token = RefreshTokenRecord(
            tokenHash: [1, 2, 3], uid: "ann", provider: "password", authTime: 5, extraClaims: nil, issuedAt: 5, revoked: false)
        try store.insertRefreshToken(token)
        #expect(try store.refreshToken(hash: [1, 2, 3]) == token)
        var other = token
        other.tokenHash = [4]
        try store.insertRefreshToken(other)
        try store.revokeRefreshTokens(uid: "ann")
        #expect(try store.refreshToken(hash: [1, 2, 3])?.revoked == true)
        #expect(try store.refreshToken(hash: [4])?.revoked == true)

        let code = OobCode(code: "c1", requestType: "VERIFY_EMAIL", uid: "ann", email: "ann@example.com", newEmail: nil,
                           createdAt: 1, expiresAt: 2)
        try store.insertOobCode(code)
        #expect(try store.oobCode("c1") == code)
        #expect(try store.oobCodes() == [code])

        #expect(try store.delete(id: "ann"))
        #expect(try !store.delete(id: "ann"))
        #expect(try store.user(email: "ann@example.com") == nil)
        #expect(try store.refreshToken(hash: [4])?.revoked == true)  // kept revoked until pruned: refreshes answer USER_NOT_FOUND
        #expect(try store.oobCodes().isEmpty)
    }
}

/// The server caches decoded users; a change made through another connection (`hearth users disable` in
/// another process) must still be seen at once.
@Test func cachedUsersSeeChangesFromOtherConnections() throws {
    let path = temporaryPath("auth.sqlite")
    let server = try SQLiteAccountStore(path: path, externalChangeCheck: 0)
    let cli = try SQLiteAccountStore(path: path)
    try server.insert(UserRecord(localId: "u", createdAt: 1))
    #expect(try server.user(id: "u")?.disabled == false)  // now cached
    var changed = try #require(try cli.user(id: "u"))
    changed.disabled = true
    try cli.update(changed)
    #expect(try server.user(id: "u")?.disabled == true)
    try cli.delete(id: "u")
    #expect(try server.user(id: "u") == nil)

    // With the default interval, a change is seen once the interval has passed (on a clock the test moves).
    let now = Mutex<UInt64>(1_000_000_000)
    let throttled = try SQLiteAccountStore(path: path, uptimeNanoseconds: { now.withLock { $0 } })
    try cli.insert(UserRecord(localId: "v", createdAt: 1))
    #expect(try throttled.user(id: "v")?.disabled == false)
    var disabled = try #require(try cli.user(id: "v"))
    disabled.disabled = true
    try cli.update(disabled)
    now.withLock { $0 += 24_000_000 }
    #expect(try throttled.user(id: "v")?.disabled == false)  // within the interval: the cached record
    now.withLock { $0 += 1_000_000 }
    #expect(try throttled.user(id: "v")?.disabled == true)
}

@Test(arguments: AccountStoreKind.available)
func oldRevokedRefreshTokensArePruned(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let store = try await kind.makeStore().store
        func token(_ byte: UInt8, issuedAt: Int64, revoked: Bool) -> RefreshTokenRecord {
            RefreshTokenRecord(tokenHash: [byte], uid: "u", provider: "password", authTime: 0, extraClaims: nil,
                               issuedAt: issuedAt, revoked: revoked)
        }
        try store.insertRefreshToken(token(1, issuedAt: 10, revoked: true))
        try store.insertRefreshToken(token(2, issuedAt: 10, revoked: false))
        try store.insertRefreshToken(token(3, issuedAt: 100, revoked: true))
        try store.pruneRevokedRefreshTokens(issuedBefore: 50)
        #expect(try store.refreshToken(hash: [1]) == nil)
        #expect(try store.refreshToken(hash: [2]) != nil)
        #expect(try store.refreshToken(hash: [3]) != nil)
    }
}

@Test(arguments: AccountStoreKind.available)
func modifyIsAtomicAndRollsBackWhenTheBodyThrows(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        struct Refused: Error {}
        let store = try await kind.makeStore().store
        var a = UserRecord(localId: "a", createdAt: 1)
        a.email = "a@b.co"
        var b = UserRecord(localId: "b", createdAt: 1)
        b.email = "b@b.co"
        try store.insert(a)
        try store.insert(b)
        #expect(try store.modify(id: "missing") { $0.disabled = true } == nil)
        #expect(try store.modify(id: "a") { $0.displayName = "Ann" }?.displayName == "Ann")
        #expect(try store.user(id: "a")?.displayName == "Ann")
        #expect(throws: AccountStoreConflict.self) { try store.modify(id: "a") { $0.email = "b@b.co" } }
        #expect(throws: Refused.self) {
            try store.modify(id: "a") { user in
                user.displayName = "never"
                throw Refused()
            }
        }
        #expect(try store.user(id: "a")?.displayName == "Ann" && store.user(id: "a")?.email == "a@b.co")
        try store.update(UserRecord(localId: "a", createdAt: 1))  // still usable after the rollbacks
    }
}

@Test(arguments: AccountStoreKind.available)
func phoneNumbersAndLinkedProvidersAreUniqueAndFound(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let store = try await kind.makeStore().store
        var ann = UserRecord(localId: "ann", createdAt: 1)
        ann.phoneNumber = "+15555550100"
        var google = LinkedProvider(providerId: "google.com", rawId: "g-1")
        google.email = "ann@gmail.example"
        ann.linkedProviders = [google]
        try store.insert(ann)
        #expect(try store.user(phoneNumber: "+15555550100")?.localId == "ann")
        #expect(try store.user(providerId: "google.com", rawId: "g-1")?.localId == "ann")
        #expect(try store.user(providerId: "google.com", rawId: "g-2") == nil)

        var bob = UserRecord(localId: "bob", createdAt: 2)
        bob.phoneNumber = "+15555550100"
        #expect { try store.insert(bob) } throws: { ($0 as? AccountStoreConflict)?.field == .phoneNumber }
        #expect(try store.user(id: "bob") == nil)  // nothing half-written
        bob.phoneNumber = nil
        bob.linkedProviders = [LinkedProvider(providerId: "google.com", rawId: "g-1")]
        #expect { try store.insert(bob) } throws: { ($0 as? AccountStoreConflict)?.field == .provider }
        bob.linkedProviders = nil
        try store.insert(bob)
        #expect { try store.modify(id: "bob") { $0.phoneNumber = "+15555550100" } } throws: {
            ($0 as? AccountStoreConflict)?.field == .phoneNumber
        }
        // Unlinking frees the identity; deleting the account frees its number.
        try store.modify(id: "ann") { $0.linkedProviders = nil }
        #expect(try store.user(providerId: "google.com", rawId: "g-1") == nil)
        try store.delete(id: "ann")
        try store.modify(id: "bob") { $0.phoneNumber = "+15555550100" }
        #expect(try store.user(phoneNumber: "+15555550100")?.localId == "bob")
    }
}

@Test func filesFromBeforePhoneNumbersOpenAndKeepTheirAccounts() throws {
    let path = temporaryPath("auth.sqlite")
    do {
        // The table as earlier versions made it: no phone column.
        let database = try SQLiteDatabase(path: path)
        try database.executeScript("""
            CREATE TABLE auth_users (uid TEXT PRIMARY KEY NOT NULL, email TEXT UNIQUE, record TEXT NOT NULL) WITHOUT ROWID;
            INSERT INTO auth_users VALUES ('old', 'old@example.com', '{"localId":"old","email":"old@example.com","emailVerified":false,"validSince":1,"createdAt":1000,"disabled":false}');
            """)
        database.close()
    }
    let store = try SQLiteAccountStore(path: path)
    #expect(try store.user(email: "old@example.com")?.localId == "old")
    try store.modify(id: "old") { $0.phoneNumber = "+447700900123" }
    #expect(try store.user(phoneNumber: "+447700900123")?.localId == "old")
}

@Test(arguments: AccountStoreKind.available)
func accountChangesAreAuthEventsInOrderWithoutSecrets(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let store = try await kind.makeStore().store
        let start = try store.authEvents(after: 0, limit: 100).head
        var ada = UserRecord(localId: "ada", createdAt: 1)
        ada.email = "ada@example.com"
        ada.password = .argon2id("$argon2id$v=19$m=65536,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2g")
        try store.insert(ada)
        try store.modify(id: "ada") { $0.displayName = "Ada" }  // not an event: nothing the feed tracks
        try store.modify(id: "ada") { $0.disabled = true }
        try store.modify(id: "ada") { $0.disabled = false }
        #expect(try store.delete(id: "ada"))
        #expect(try !store.delete(id: "ada"))
        let page = try store.authEvents(after: start, limit: 100)
        #expect(page.events.map(\.kind) == [.created, .disabled, .enabled, .deleted])
        #expect(page.events.allSatisfy { $0.uid == "ada" })
        #expect(page.events.map(\.position) == page.events.map(\.position).sorted())
        #expect(page.head == page.events.last?.position)
        #expect(page.events[0].userJSON.contains("\"email\":\"ada@example.com\""))
        #expect(page.events[3].userJSON.contains("\"displayName\":\"Ada\""), "a deletion shows the account as it was")
        #expect(!page.events.contains { $0.userJSON.contains("argon2id") }, "no password hash in an event")
        let rest = try store.authEvents(after: page.events[1].position, limit: 1)
        #expect(rest.events.map(\.kind) == [.enabled])
    }
}
