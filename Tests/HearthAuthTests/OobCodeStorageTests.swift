import HearthProtocol
import Foundation
import HearthAuth
import HearthAuthSQLite
import HearthCrypto
import HearthTesting
import Synchronization
import Testing

/// Security review finding 5: auth.sqlite is private to its owner, and every store holds out-of-band
/// codes only as SHA-256 hashes, unless the outbox is how codes are delivered.
private func mode(_ path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
}

@Test func authDatabaseFilesAreCreatedPrivate() throws {
    let path = temporaryPath("auth.sqlite")
    let store = try SQLiteAccountStore(path: path)
    try store.insertOobCode(OobCode(code: "c", requestType: "VERIFY_EMAIL", uid: "u", email: "e@b.co", newEmail: nil,
                                    createdAt: 1, expiresAt: 2))
    for file in [path, path + "-wal", path + "-shm"] {
        #expect(FileManager.default.fileExists(atPath: file), "\(file)")
        #expect(mode(file) == 0o600, "\(file)")
    }
    store.close()
    // An existing world-readable file (an older install) is made private when opened.
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
    let reopened = try SQLiteAccountStore(path: path)
    #expect(mode(path) == 0o600)
    reopened.close()
}

@Test(arguments: AccountStoreKind.available)
func storedCodesAreFoundByHashAndKeptOnlyForTheOutbox(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let tested = try await kind.makeStore()
        let store = tested.store
        let hidden = "hidden-code-\(UUID().uuidString)", shown = "shown-code-\(UUID().uuidString)"
        try store.insertOobCode(OobCode(code: hidden, requestType: "PASSWORD_RESET", uid: "u", email: "e@b.co", newEmail: nil,
                                        createdAt: 1, expiresAt: 2, outboxShowsCode: false))
        try store.insertOobCode(OobCode(code: shown, requestType: "EMAIL_SIGNIN", uid: "", email: "e@b.co", newEmail: nil,
                                        createdAt: 2, expiresAt: 3, continueUrl: "http://localhost/finish"))
        #expect(try store.oobCode(shown)?.continueUrl == "http://localhost/finish")
        #expect(try store.oobCodes().last?.continueUrl == "http://localhost/finish")
        #expect(try store.oobCode(hidden)?.requestType == "PASSWORD_RESET")
        #expect(try store.oobCode(hidden)?.code == hidden)
        #expect(try store.oobCode("other") == nil)
        #expect(try store.oobCodes().map(\.code) == ["", shown])
        let text = try tested.storedText()
        #expect(!text.contains(hidden))
        #expect(text.contains(shown))
        try store.deleteOobCode(hidden)
        #expect(try store.oobCode(hidden) == nil)
    }
}

/// With a mailer outside emulator mode, the code goes out by email only: the database has its hash, the
/// outbox lists the entry without the code, and the emailed code works.
@Test(arguments: AccountStoreKind.available)
func emailedCodesAreNotKeptInPlainText(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let sent = Mutex<[OutgoingEmail]>([])
        let tested = try await kind.makeStore()
        var configuration = AuthConfiguration(projectID: "demo-test", emulator: false, adminToken: "admin")
        configuration.passwordHasher = .testing
        configuration.deliverEmail = { email in sent.withLock { $0.append(email) } }
        let service = try AuthService(configuration: configuration, store: tested.store, key: SigningKey(privateKey: Harness.key))
        func post(_ operation: String, _ body: [String: Any]) -> HTTPResponse {
            service.handle(HTTPRequest(
                method: .post, path: "/identitytoolkit.googleapis.com/v1/accounts:\(operation)", queryItems: [("key", "k")],
                headers: ["content-type": "application/json", "host": "h"], body: Array(try! JSONSerialization.data(withJSONObject: body))))
        }
        #expect(post("signUp", ["email": "m@b.co", "password": "secret123"]).status == 200)
        #expect(post("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "m@b.co"]).status == 200)
        for _ in 0..<400 where sent.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
        let body = try #require(sent.withLock { $0.first }?.body)
        let code = try #require(URLComponents(string: body.split(separator: "\n").first { $0.contains("oobCode=") }
            .map { String($0).trimmingCharacters(in: .whitespaces) } ?? "")?.queryItems?.first { $0.name == "oobCode" }?.value)
        #expect(try !tested.storedText().contains(code))
        let outbox = service.handle(HTTPRequest(
            method: .get, path: "/emulator/v1/projects/demo-test/oobCodes", headers: ["authorization": "Bearer admin"]))
        let entries = (try JSONSerialization.jsonObject(with: Data(outbox.body)) as? [String: Any])?["oobCodes"] as? [[String: Any]]
        #expect(entries?.count == 1 && entries?.first?["oobCode"] == nil && entries?.first?["email"] as? String == "m@b.co")
        #expect(post("resetPassword", ["oobCode": code, "newPassword": "another-secret"]).status == 200)
    }
}
