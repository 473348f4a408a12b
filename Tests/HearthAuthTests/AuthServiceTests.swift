import HearthProtocol
import Foundation
import HearthAuth
import HearthAuthSQLite
import HearthCrypto
import HearthTesting
import Synchronization
import Testing

/// A clock the test moves by hand (milliseconds).
final class TestClock: Sendable {
    let value = Mutex<Int64>(1_800_000_000_000)
    func advance(seconds: Int64) { value.withLock { $0 += seconds * 1000 } }
    var now: Int64 { value.withLock { $0 } }
}

/// One service on a fresh store (SQLite unless given another) with cheap argon2id parameters.
struct Harness {
    let service: AuthService
    let clock = TestClock()

    init(
        store: (any AccountStore)? = nil, emulator: Bool = true, adminToken: String? = nil,
        configure: (inout AuthConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = AuthConfiguration(projectID: "demo-test", emulator: emulator, adminToken: adminToken)
        configuration.passwordHasher = .testing
        configure(&configuration)
        let clock = self.clock
        service = try AuthService(
            configuration: configuration, store: store ?? SQLiteAccountStore(path: temporaryPath("auth.sqlite")),
            key: SigningKey(privateKey: Self.key), clock: { clock.now })
    }

    /// Calls to a service made elsewhere (a cluster node opened over PostgreSQL); its clock is the real one.
    init(service: AuthService) {
        self.service = service
    }

    /// A service on a fresh store of `kind`.
    static func make(
        _ kind: AccountStoreKind, emulator: Bool = true, adminToken: String? = nil,
        configure: (inout AuthConfiguration) -> Void = { _ in }
    ) async throws -> Harness {
        try Harness(store: await kind.makeStore().store, emulator: emulator, adminToken: adminToken, configure: configure)
    }

    static let key = try! RSAPrivateKey.generate(bits: 2048)

    /// POSTs JSON to a client endpoint (with `?key=`) and returns status and decoded body.
    @discardableResult
    func post(_ path: String, _ body: [String: Any], admin: Bool = false, key: Bool = true, address: String? = nil)
        -> (status: Int, json: [String: Any])
    {
        var headers = ["content-type": "application/json", "host": "127.0.0.1:9000"]
        if admin { headers["authorization"] = "Bearer owner" }
        let request = HTTPRequest(
            method: .post, path: path, queryItems: key ? [("key", "fake")] : [], headers: headers,
            body: Array(try! JSONSerialization.data(withJSONObject: body)), remoteAddress: address)
        return decode(service.handle(request))
    }

    func get(_ path: String, admin: Bool = false) -> (status: Int, json: [String: Any]) {
        var headers = ["host": "127.0.0.1:9000"]
        if admin { headers["authorization"] = "Bearer owner" }
        return decode(service.handle(HTTPRequest(method: .get, path: path, headers: headers)))
    }

    func decode(_ response: HTTPResponse) -> (status: Int, json: [String: Any]) {
        (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:])
    }

    @discardableResult
    func client(_ operation: String, _ body: [String: Any], address: String? = nil) -> (status: Int, json: [String: Any]) {
        post("/identitytoolkit.googleapis.com/v1/accounts:\(operation)", body, address: address)
    }

    func refresh(_ token: String) -> (status: Int, json: [String: Any]) {
        let request = HTTPRequest(
            method: .post, path: "/securetoken.googleapis.com/v1/token", queryItems: [("key", "fake")],
            headers: ["content-type": "application/x-www-form-urlencoded"],
            body: Array("grant_type=refresh_token&refresh_token=\(token)".utf8))
        return decode(service.handle(request))
    }
}

func errorMessage(_ json: [String: Any]) -> String? { (json["error"] as? [String: Any])?["message"] as? String }

@Test func idTokensRoundTripThroughTheVerifier() throws {
    let harness = try Harness()
    let signUp = harness.client("signUp", ["email": "Ann@Example.com", "password": "secret123", "returnSecureToken": true])
    #expect(signUp.status == 200)
    #expect(signUp.json["kind"] as? String == "identitytoolkit#SignupNewUserResponse")
    #expect(signUp.json["email"] as? String == "ann@example.com")
    #expect(signUp.json["expiresIn"] as? String == "3600")
    let idToken = try #require(signUp.json["idToken"] as? String)
    let context = try harness.service.verifier.verify(idToken)
    #expect(context.uid == signUp.json["localId"] as? String)
    #expect(context.provider == "password")
    #expect(context.expiresAt == context.issuedAt + 3600)
    #expect(context.claims.child("email").stringValue == "ann@example.com")
    #expect(context.claims.child("iss").stringValue == "https://securetoken.google.com/demo-test")
    #expect(context.auth.child("token").child("firebase").child("sign_in_provider").stringValue == "password")
    #expect(context.auth.child("uid").stringValue == context.uid)

    // Tampering with the payload breaks the signature.
    var parts = idToken.split(separator: ".").map(String.init)
    parts[1] = Base64URL.encode(Array(#"{"aud":"demo-test","iss":"https://securetoken.google.com/demo-test","sub":"eve","iat":1,"exp":9999999999}"#.utf8))
    #expect(throws: TokenVerificationError(reason: .badSignature)) {
        try harness.service.verifier.verifyUncached(parts.joined(separator: "."), now: harness.clock.now / 1000)
    }
    // An hour and a minute later the token is expired (the cache re-checks expiry).
    harness.clock.advance(seconds: 3600 + 61)
    #expect(throws: TokenVerificationError(reason: .expired)) { try harness.service.verifier.verify(idToken) }
}

@Test func unsignedEmulatorTokensAreAcceptedOnlyInEmulatorMode() throws {
    let header = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
    let payload = Base64URL.encode(Array(
        #"{"iss":"https://securetoken.google.com/demo-test","aud":"demo-test","sub":"alice","iat":0,"exp":3600,"firebase":{"sign_in_provider":"custom"}}"#.utf8))
    let token = header + "." + payload + "."
    let emulator = try Harness(emulator: true)
    #expect(try emulator.service.verifier.verify(token).uid == "alice")
    #expect(try emulator.service.verifier.verify(token).uid == "alice")  // again: no cached expiry check
    let production = try Harness(emulator: false, adminToken: "secret-admin")
    #expect(throws: TokenVerificationError(reason: .unsupportedAlgorithm)) { try production.service.verifier.verify(token) }
    let wrongProject = header + "." + Base64URL.encode(Array(#"{"iss":"x","aud":"other","sub":"a"}"#.utf8)) + "."
    #expect(throws: TokenVerificationError(reason: .wrongAudience)) { try emulator.service.verifier.verify(wrongProject) }
    #expect(throws: TokenVerificationError(reason: .malformed)) { try emulator.service.verifier.verify("not-a-jwt") }
}

/// The JS SDK's flow: sign-up → sign-in → refresh → lookup → sendOobCode → apply → verified →
/// password reset → the old refresh token is rejected.
@Test(arguments: AccountStoreKind.available)
func theEmailPasswordLifecycle(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let harness = try await Harness.make(kind)
        let signUp = harness.client("signUp", ["email": "bob@example.com", "password": "secret123", "returnSecureToken": true, "clientType": "CLIENT_TYPE_WEB"])
        let uid = try #require(signUp.json["localId"] as? String)
        #expect(uid.count == 28)

        let signIn = harness.client("signInWithPassword", ["email": "bob@example.com", "password": "secret123", "returnSecureToken": true])
        #expect(signIn.status == 200)
        #expect(signIn.json["registered"] as? Bool == true)
        let refreshToken = try #require(signIn.json["refreshToken"] as? String)

        harness.clock.advance(seconds: 5)
        let refreshed = harness.refresh(refreshToken)
        #expect(refreshed.status == 200)
        #expect(refreshed.json["expires_in"] as? String == "3600")
        #expect(refreshed.json["user_id"] as? String == uid)
        #expect(refreshed.json["access_token"] as? String == refreshed.json["id_token"] as? String)
        // The same refresh token, valid again (FirebaseAuth's SDKs present it again by design).
        #expect(refreshed.json["refresh_token"] as? String == refreshToken)
        #expect(harness.refresh(refreshToken).status == 200)
        let idToken = try #require(refreshed.json["id_token"] as? String)
        // auth_time stays the sign-in's.
        let context = try harness.service.verifier.verify(idToken)
        #expect(context.issuedAt == Int64(context.claims.child("auth_time").numberValue!) + 5)

        let lookup = harness.client("lookup", ["idToken": idToken])
        let user = try #require((lookup.json["users"] as? [[String: Any]])?.first)
        #expect(user["localId"] as? String == uid)
        #expect(user["emailVerified"] as? Bool == false)
        #expect(user["passwordHash"] as? String == "UkVEQUNURUQ=")
        #expect(user["createdAt"] is String && user["lastLoginAt"] is String && user["validSince"] is String)
        #expect((user["providerUserInfo"] as? [[String: Any]])?.first?["providerId"] as? String == "password")

        let send = harness.client("sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": idToken])
        #expect(send.json["email"] as? String == "bob@example.com")
        let outbox = harness.get("/emulator/v1/projects/demo-test/oobCodes")
        let verifyCode = try #require((outbox.json["oobCodes"] as? [[String: Any]])?.first)
        #expect(verifyCode["requestType"] as? String == "VERIFY_EMAIL")
        #expect((verifyCode["oobLink"] as? String)?.hasPrefix("http://127.0.0.1:9000/emulator/action?mode=verifyEmail&lang=en&oobCode=") == true)
        let applied = harness.client("update", ["oobCode": verifyCode["oobCode"]!])
        #expect(applied.json["emailVerified"] as? Bool == true)
        #expect(errorMessage(harness.client("update", ["oobCode": verifyCode["oobCode"]!]).json) == "INVALID_OOB_CODE")
        let afterVerify = harness.client("lookup", ["idToken": idToken])
        #expect((afterVerify.json["users"] as? [[String: Any]])?.first?["emailVerified"] as? Bool == true)

        harness.clock.advance(seconds: 5)
        harness.client("sendOobCode", ["requestType": 1, "email": "BOB@example.com"])  // Android sends enum indexes
        let resetCode = try #require(
            (harness.get("/emulator/v1/projects/demo-test/oobCodes").json["oobCodes"] as? [[String: Any]])?
                .first { $0["requestType"] as? String == "PASSWORD_RESET" }?["oobCode"] as? String)
        let peek = harness.client("resetPassword", ["oobCode": resetCode])
        #expect(peek.json["requestType"] as? String == "PASSWORD_RESET" && peek.json["email"] as? String == "bob@example.com")
        #expect(errorMessage(harness.client("resetPassword", ["oobCode": resetCode, "newPassword": "short"]).json)
            == "WEAK_PASSWORD : Password should be at least 6 characters")
        let reset = harness.client("resetPassword", ["oobCode": resetCode, "newPassword": "new-secret"])
        #expect(reset.status == 200 && reset.json["email"] as? String == "bob@example.com")

        #expect(errorMessage(harness.refresh(refreshToken).json) == "TOKEN_EXPIRED")  // revoked by the reset
        #expect(errorMessage(harness.client("lookup", ["idToken": idToken]).json) == "TOKEN_EXPIRED")
        #expect(errorMessage(harness.client("signInWithPassword", ["email": "bob@example.com", "password": "secret123"]).json)
            == "INVALID_LOGIN_CREDENTIALS")
        #expect(harness.client("signInWithPassword", ["email": "bob@example.com", "password": "new-secret"]).status == 200)
    }
}

@Test(arguments: AccountStoreKind.available)
func errorsHaveFirebasesShapeAndStrings(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let harness = try await Harness.make(kind)
        harness.client("signUp", ["email": "a@b.co", "password": "secret123"])
        let exists = harness.client("signUp", ["email": "A@B.co", "password": "secret123"])
        #expect(exists.status == 400)
        let error = try #require(exists.json["error"] as? [String: Any])
        #expect(error["code"] as? Int == 400 && error["message"] as? String == "EMAIL_EXISTS")
        #expect((error["errors"] as? [[String: Any]])?.first?["reason"] as? String == "invalid")
        #expect(errorMessage(harness.client("signUp", ["email": "c@b.co", "password": "12345"]).json)
            == "WEAK_PASSWORD : Password should be at least 6 characters")
        #expect(errorMessage(harness.client("signUp", ["email": "not an email", "password": "secret123"]).json) == "INVALID_EMAIL")
        #expect(errorMessage(harness.client("signUp", ["email": "c@b.co"]).json) == "MISSING_PASSWORD")
        #expect(errorMessage(harness.client("signInWithPassword", ["email": "nobody@b.co", "password": "secret123"]).json)
            == "INVALID_LOGIN_CREDENTIALS")
        #expect(errorMessage(harness.client("lookup", ["idToken": "garbage"]).json) == "INVALID_ID_TOKEN")
        #expect(errorMessage(harness.refresh("garbage").json) == "INVALID_REFRESH_TOKEN")
        #expect(harness.post("/identitytoolkit.googleapis.com/v1/accounts:signUp", [:], key: false).status == 403)
        #expect(harness.post("/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts:lookup", ["localId": ["x"]]).status == 401)
        #expect(harness.get("/identitytoolkit.googleapis.com/v1/nothing").status == 404)
        let anonymous = harness.client("signUp", ["returnSecureToken": true])
        #expect(anonymous.status == 200)
        #expect(try harness.service.verifier.verify(anonymous.json["idToken"] as! String).provider == "anonymous")
    }
}

@Test(arguments: AccountStoreKind.available)
func disabledUsersAreSignedOut(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let harness = try await Harness.make(kind)
        let signUp = harness.client("signUp", ["email": "d@b.co", "password": "secret123"])
        let uid = signUp.json["localId"] as! String
        harness.post("/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts:update", ["localId": uid, "disableUser": true], admin: true)
        #expect(errorMessage(harness.client("signInWithPassword", ["email": "d@b.co", "password": "secret123"]).json) == "USER_DISABLED")
        #expect(errorMessage(harness.refresh(signUp.json["refreshToken"] as! String).json) == "USER_DISABLED")
        #expect(errorMessage(harness.client("lookup", ["idToken": signUp.json["idToken"]!]).json) == "USER_DISABLED")
    }
}

@Test func repeatedFailuresLockTheAccountAndTheAddress() throws {
    let harness = try Harness(emulator: false, adminToken: "t") { $0.attemptsPerIP = .init(capacity: 3, perSecond: 0) }
    harness.post("/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts", ["email": "e@b.co", "password": "secret123"], admin: false)
    let create = harness.service.handle(HTTPRequest(
        method: .post, path: "/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts",
        headers: ["authorization": "Bearer t"], body: Array(#"{"email":"e@b.co","password":"secret123"}"#.utf8)))
    #expect(create.status == 200)
    for _ in 0..<10 {
        #expect(errorMessage(harness.client("signInWithPassword", ["email": "e@b.co", "password": "wrong-one"]).json)
            == "INVALID_LOGIN_CREDENTIALS")
    }
    let locked = harness.client("signInWithPassword", ["email": "e@b.co", "password": "secret123"])
    #expect(errorMessage(locked.json)?.hasPrefix("TOO_MANY_ATTEMPTS_TRY_LATER : ") == true)
    harness.clock.advance(seconds: 31)
    #expect(harness.client("signInWithPassword", ["email": "e@b.co", "password": "secret123"]).status == 200)

    for _ in 0..<3 { harness.client("signInWithPassword", ["email": "x@b.co", "password": "whatever"], address: "10.0.0.1") }
    #expect(errorMessage(harness.client("signInWithPassword", ["email": "e@b.co", "password": "secret123"], address: "10.0.0.1").json)?
        .hasPrefix("TOO_MANY_ATTEMPTS_TRY_LATER") == true)
    #expect(harness.client("signInWithPassword", ["email": "e@b.co", "password": "secret123"], address: "10.0.0.2").status == 200)
}

/// Users exported from Firebase sign in with their old passwords; the hash becomes argon2id.
@Test(arguments: AccountStoreKind.available)
func importedFirebaseScryptUsersSignInAndAreRehashed(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let harness = try await Harness.make(kind)
        let imported = harness.post("/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts:batchCreate", [
            "hashAlgorithm": "SCRYPT",
            "signerKey": "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
            "saltSeparator": "Bw==", "rounds": 8, "memoryCost": 14,
            "users": [
                ["localId": "u1", "email": "user1@test.com",
                 "passwordHash": "lSrfV15cpx95_sZS2W9c9Kp6i_LVgQNDNC_qzrCnh1SAyZvqmZqAjTdn3aoItz-VHjoZilo78198JAdRuid5lQ==",
                 "salt": "42xEC-ixf3L2lw=="],
                ["email": "no-id@test.com"],
            ],
        ], admin: true)
        #expect(imported.status == 200)
        #expect((imported.json["error"] as? [[String: Any]])?.first?["index"] as? Int == 1)
        #expect(errorMessage(harness.client("signInWithPassword", ["email": "user1@test.com", "password": "hunter2"]).json)
            == "INVALID_LOGIN_CREDENTIALS")
        #expect(harness.client("signInWithPassword", ["email": "user1@test.com", "password": "user1password"]).status == 200)
        guard case .argon2id = try harness.service.store.user(id: "u1")?.password else {
            Issue.record("the imported hash was not upgraded to argon2id")
            return
        }
        #expect(harness.client("signInWithPassword", ["email": "user1@test.com", "password": "user1password"]).status == 200)
    }
}

@Test func jwksPublishesTheSigningKey() throws {
    let harness = try Harness()
    let jwks = harness.get("/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com")
    let key = try #require((jwks.json["keys"] as? [[String: Any]])?.first)
    #expect(key["kid"] as? String == harness.service.key.keyID)
    #expect(key["alg"] as? String == "RS256" && key["e"] as? String == "AQAB")
    #expect(Base64URL.decode(key["n"] as! String)?.count == 256)
}

@Test(arguments: AccountStoreKind.available)
func customTokensSignIn(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let harness = try await Harness.make(kind, emulator: false, adminToken: "t")
        let token = try harness.service.createCustomToken(uid: "robot", claims: ["role": "admin"])
        let signIn = harness.client("signInWithCustomToken", ["token": token, "returnSecureToken": true])
        #expect(signIn.json["isNewUser"] as? Bool == true)
        let context = try harness.service.verifier.verify(signIn.json["idToken"] as! String)
        #expect(context.uid == "robot" && context.provider == "custom")
        #expect(context.claims.child("role").stringValue == "admin")
        let refreshed = harness.refresh(signIn.json["refreshToken"] as! String)
        #expect(try harness.service.verifier.verify(refreshed.json["id_token"] as! String).claims.child("role").stringValue == "admin")
        let unsigned = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"uid":"x"}"#.utf8)) + "."
        #expect(errorMessage(harness.client("signInWithCustomToken", ["token": unsigned]).json)?.hasPrefix("INVALID_CUSTOM_TOKEN : ") == true)
    }
}

@Test func codesAreHandedToTheMailerWithTheirLinks() async throws {
    let sent = Mutex<[OutgoingEmail]>([])
    let harness = try Harness { $0.deliverEmail = { email in sent.withLock { $0.append(email) } }; $0.publicURL = "https://auth.example.com" }
    harness.client("signUp", ["email": "m@b.co", "password": "secret123"])
    harness.client("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "m@b.co"])
    harness.client("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "nobody@b.co"])  // protected: no email
    for _ in 0..<200 where sent.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
    try await Task.sleep(for: .milliseconds(50))
    let emails = sent.withLock { $0 }
    #expect(emails.count == 1)
    let email = try #require(emails.first)
    #expect(email.to == "m@b.co" && email.requestType == "PASSWORD_RESET")
    let code = try #require((harness.get("/emulator/v1/projects/demo-test/oobCodes").json["oobCodes"] as? [[String: Any]])?.first?["oobCode"] as? String)
    #expect(email.body.contains("https://auth.example.com/emulator/action?mode=resetPassword&lang=en&oobCode=\(code)&apiKey=fake"))
}

@Test(arguments: AccountStoreKind.available)
func actionPagesVerifyAndResetOnlyOnPost(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let harness = try await Harness.make(kind)
        let signUp = harness.client("signUp", ["email": "p<b>@b.co", "password": "secret123"])
        harness.client("sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": signUp.json["idToken"]!])
        let codes = { harness.get("/emulator/v1/projects/demo-test/oobCodes").json["oobCodes"] as? [[String: Any]] ?? [] }
        let verify = try #require(codes().first?["oobCode"] as? String)
        func page(_ query: String) -> HTTPResponse {
            harness.service.handle(HTTPRequest(
                method: .get, path: "/emulator/action",
                queryItems: query.split(separator: "&").map { let p = $0.split(separator: "="); return (String(p[0]), String(p[1])) },
                headers: ["accept": "text/html,application/xhtml+xml", "host": "h"]))
        }
        func post(_ body: String) -> HTTPResponse {
            harness.service.handle(HTTPRequest(
                method: .post, path: "/emulator/action", headers: ["content-type": "application/x-www-form-urlencoded"],
                body: Array(body.utf8)))
        }
        let opened = page("mode=verifyEmail&oobCode=\(verify)&apiKey=k")
        #expect(opened.status == 200 && opened.bodyText.contains("<form method=\"post\""))
        #expect(opened.bodyText.contains("p&lt;b&gt;@b.co") && !opened.bodyText.contains("p<b>@b.co"))
        #expect(codes().count == 1)  // opening the page did not use the code
        #expect(post("mode=verifyEmail&oobCode=\(verify)&apiKey=k").bodyText.contains("is verified"))
        #expect(codes().isEmpty)
        #expect(page("mode=verifyEmail&oobCode=\(verify)&apiKey=k").status == 400)

        harness.client("sendOobCode", ["requestType": "PASSWORD_RESET", "email": "p<b>@b.co"])
        let reset = try #require(codes().first?["oobCode"] as? String)
        #expect(page("mode=resetPassword&oobCode=\(reset)&apiKey=k").bodyText.contains("name=\"newPassword\""))
        #expect(post("mode=resetPassword&oobCode=\(reset)&newPassword=short").status == 400)
        #expect(post("mode=resetPassword&oobCode=\(reset)&newPassword=long-enough%21").status == 200)
        #expect(harness.client("signInWithPassword", ["email": "p<b>@b.co", "password": "long-enough!"]).status == 200)
    }
}

@Test func forwardedAddressesCountOnlyFromTrustedProxies() throws {
    for trusted in [false, true] {
        let harness = try Harness(emulator: false, adminToken: "t") {
            $0.attemptsPerIP = .init(capacity: 2, perSecond: 0)
            $0.trustedProxies = TrustedProxies(trusted ? ["10.0.0.1"] : [])
        }
        var statuses: [Int] = []
        for index in 0..<3 {
            // Three connections of the proxy, for one client.
            let response = harness.service.handle(HTTPRequest(
                method: .post, path: "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword", queryItems: [("key", "k")],
                headers: ["x-forwarded-for": "10.9.9.\(index), 192.0.2.7"], body: Array(#"{"email":"a@b.co","password":"whatever"}"#.utf8),
                remoteAddress: trusted ? "10.0.0.1" : "10.0.0.\(index + 2)"))
            statuses.append(response.status)
            #expect(response.status == 400)
            let message = errorMessage(harness.decode(response).json) ?? ""
            #expect(message.hasPrefix("TOO_MANY_ATTEMPTS_TRY_LATER") == (trusted && statuses.count == 3))
        }
    }
}

/// The transport always reports the peer, which behind a proxy is the proxy: from a trusted proxy the
/// header's last entry (what the proxy appended) counts instead, and a client-written first entry does not;
/// from any other peer the header is the client's own word and is ignored.
@Test func forwardedForFromATrustedProxyWinsOverThePeerAddress() throws {
    for trusted in [false, true] {
        let proxies = ["10.0.0.1", "10.0.1.0", "10.0.1.1", "10.0.1.2"]
        let harness = try Harness(emulator: false, adminToken: "t") {
            $0.attemptsPerIP = .init(capacity: 2, perSecond: 0)
            $0.trustedProxies = TrustedProxies(trusted ? proxies : [])
        }
        func attempt(_ forwardedFor: String, peer: String) -> String {
            let response = harness.service.handle(HTTPRequest(
                method: .post, path: "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword", queryItems: [("key", "k")],
                headers: ["x-forwarded-for": forwardedFor], body: Array(#"{"email":"a@b.co","password":"whatever"}"#.utf8),
                remoteAddress: peer))
            return errorMessage(harness.decode(response).json) ?? ""
        }
        // Three clients behind one proxy: limited by the proxy's address only when the header is not trusted.
        let viaProxy = ["192.0.2.1", "192.0.2.2", "192.0.2.3"].map { attempt($0, peer: "10.0.0.1") }
        #expect(viaProxy.last?.hasPrefix("TOO_MANY_ATTEMPTS_TRY_LATER") == !trusted)
        // One client through three proxy connections, spoofing a different first entry each time.
        let oneClient = ["1.1.1.1", "2.2.2.2", "3.3.3.3"].enumerated().map { attempt("\($1), 198.51.100.9", peer: "10.0.1.\($0)") }
        #expect(oneClient.last?.hasPrefix("TOO_MANY_ATTEMPTS_TRY_LATER") == trusted)
        // A client that reaches the server directly, naming another address each time: its own counts.
        let direct = ["4.4.4.4", "5.5.5.5", "6.6.6.6"].map { attempt($0, peer: "203.0.113.5") }
        #expect(direct.last?.hasPrefix("TOO_MANY_ATTEMPTS_TRY_LATER") == true)
    }
}

/// JS verifyBeforeUpdateEmail: the code goes to the new address; using it changes the email and ends sessions.
@Test(arguments: AccountStoreKind.available)
func verifyAndChangeEmail(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let harness = try await Harness.make(kind)
        let signUp = harness.client("signUp", ["email": "old@b.co", "password": "secret123"])
        harness.client("signUp", ["email": "taken@b.co", "password": "secret123"])
        let idToken = signUp.json["idToken"] as! String
        #expect(errorMessage(harness.client("sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken]).json)
            == "MISSING_NEW_EMAIL")
        // Under email-enumeration protection a taken address answers success and sends nothing.
        #expect(harness.client("sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": "taken@b.co"]).status == 200)
        harness.client("sendOobCode", ["requestType": 7, "idToken": idToken, "newEmail": "New@b.co"])
        let codes = harness.get("/emulator/v1/projects/demo-test/oobCodes").json["oobCodes"] as? [[String: Any]] ?? []
        #expect(codes.count == 1)
        let code = try #require(codes.first)
        #expect(code["newEmail"] as? String == "new@b.co" && code["email"] as? String == "old@b.co")
        #expect((code["oobLink"] as? String)?.contains("mode=verifyAndChangeEmail") == true)
        let peek = harness.client("resetPassword", ["oobCode": code["oobCode"]!])
        #expect(peek.json["newEmail"] as? String == "new@b.co" && peek.json["requestType"] as? String == "VERIFY_AND_CHANGE_EMAIL")
        harness.clock.advance(seconds: 2)
        let applied = harness.client("update", ["oobCode": code["oobCode"]!])
        #expect(applied.json["email"] as? String == "new@b.co" && applied.json["emailVerified"] as? Bool == true)
        #expect(errorMessage(harness.refresh(signUp.json["refreshToken"] as! String).json) == "TOKEN_EXPIRED")
        #expect(harness.client("signInWithPassword", ["email": "new@b.co", "password": "secret123"]).status == 200)
    }
}

/// Passwordless: sendOobCode EMAIL_SIGNIN → the link redirects to the app → signInWithEmailLink.
@Test(arguments: AccountStoreKind.available)
func emailLinkSignIn(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let harness = try await Harness.make(kind) { $0.authorizedDomains.append("app.test") }
        #expect(errorMessage(harness.client("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "link@b.co"]).json)
            == "MISSING_CONTINUE_URI")
        harness.client("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "Link@b.co", "continueUrl": "https://app.test/finish?x=1", "canHandleCodeInApp": true])
        let code = try #require((harness.get("/emulator/v1/projects/demo-test/oobCodes").json["oobCodes"] as? [[String: Any]])?.first)
        #expect(code["requestType"] as? String == "EMAIL_SIGNIN" && code["email"] as? String == "link@b.co")
        let oobCode = code["oobCode"] as! String
        let peek = harness.client("resetPassword", ["oobCode": oobCode])
        #expect(peek.json["requestType"] as? String == "EMAIL_SIGNIN" && peek.json["email"] == nil)

        let redirect = harness.service.handle(HTTPRequest(
            method: .get, path: "/emulator/action",
            queryItems: [("mode", "signIn"), ("oobCode", oobCode), ("apiKey", "k"), ("continueUrl", "https://app.test/finish?x=1")]))
        #expect(redirect.status == 303)
        #expect(redirect.headers.first { $0.0 == "location" }?.1 == "https://app.test/finish?x=1&mode=signIn&oobCode=\(oobCode)&apiKey=k")

        #expect(errorMessage(harness.client("signInWithEmailLink", ["oobCode": oobCode, "email": "other@b.co"]).json)
            == "INVALID_EMAIL : The email provided does not match the sign-in email address.")
        let signIn = harness.client("signInWithEmailLink", ["oobCode": oobCode, "email": "link@b.co", "returnSecureToken": true])
        #expect(signIn.status == 200 && signIn.json["isNewUser"] as? Bool == true)
        #expect(errorMessage(harness.client("signInWithEmailLink", ["oobCode": oobCode, "email": "link@b.co"]).json) == "INVALID_OOB_CODE")
        let user = try #require((harness.client("lookup", ["idToken": signIn.json["idToken"]!]).json["users"] as? [[String: Any]])?.first)
        #expect(user["emailVerified"] as? Bool == true && user["passwordHash"] == nil)
        let methods = harness.post("/identitytoolkit.googleapis.com/v1/accounts:createAuthUri",
                                   ["identifier": "link@b.co", "continueUri": "http://localhost"], admin: true)
        #expect(methods.json["signinMethods"] as? [String] == ["emailLink"])
    }
}

@Test func sessionCookiesAreSignedAndBounded() throws {
    let harness = try Harness()
    let idToken = harness.client("signUp", ["email": "s@b.co", "password": "secret123"]).json["idToken"] as! String
    let path = "/identitytoolkit.googleapis.com/v1/projects/demo-test:createSessionCookie"
    #expect(errorMessage(harness.post(path, ["idToken": idToken, "validDuration": 60], admin: true).json)?
        .hasPrefix("INVALID_DURATION") == true)
    #expect(harness.post(path, ["idToken": idToken, "validDuration": 3600]).status == 401)
    let cookie = try #require(harness.post(path, ["idToken": idToken, "validDuration": "3600"], admin: true).json["sessionCookie"] as? String)
    let payload = try #require(Base64URL.decode(String(cookie.split(separator: ".")[1])))
    let claims = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    #expect(claims["iss"] as? String == "https://session.firebase.google.com/demo-test")
    #expect((claims["exp"] as? Int).map { $0 - (claims["iat"] as! Int) } == 3600)
}

/// Email-enumeration protection (docs/auth.md §8.1): a direct email change is refused the same way whether the
/// address is free or taken; verify-before-update still works; without protection the old behaviour stays.
@Test(arguments: AccountStoreKind.available)
func directEmailChangeIsRefusedUnderEnumerationProtection(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let harness = try await Harness.make(kind)
        let idToken = harness.client("signUp", ["email": "me@b.co", "password": "secret123"]).json["idToken"] as! String
        harness.client("signUp", ["email": "taken@b.co", "password": "secret123"])
        let refused = "OPERATION_NOT_ALLOWED : Please verify the new email before changing email."
        for address in ["taken@b.co", "free@b.co"] {
            let update = harness.client("update", ["idToken": idToken, "email": address, "returnSecureToken": true])
            #expect(update.status == 400 && errorMessage(update.json) == refused, "\(address)")
        }
        #expect(errorMessage(harness.client("update", ["idToken": idToken, "email": "not an email"]).json) == "INVALID_EMAIL")
        #expect(harness.client("update", ["idToken": idToken, "email": "ME@b.co", "displayName": "Me"]).status == 200)  // no change
        let user = (harness.client("lookup", ["idToken": idToken]).json["users"] as? [[String: Any]])?.first
        #expect(user?["email"] as? String == "me@b.co")
        #expect(harness.client("sendOobCode", ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": "free@b.co"]).status == 200)

        // The emulator's switch turns protection off: then the direct change and EMAIL_EXISTS are back.
        let patch = harness.service.handle(HTTPRequest(
            method: .patch, path: "/emulator/v1/projects/demo-test/config", headers: ["content-type": "application/json"],
            body: Array(#"{"emailPrivacyConfig":{"enableImprovedEmailPrivacy":false}}"#.utf8)))
        #expect(patch.status == 200)
        #expect(errorMessage(harness.client("update", ["idToken": idToken, "email": "taken@b.co"]).json) == "EMAIL_EXISTS")
        #expect(harness.client("update", ["idToken": idToken, "email": "free@b.co"]).json["email"] as? String == "free@b.co")
    }
}

/// An ID token names every identity of its account, as Firebase's do: the rules' `auth.token` sees them.
@Test(arguments: AccountStoreKind.available)
func idTokensCarryPhoneNumbersAndLinkedIdentities(_ kind: AccountStoreKind) async throws {
    try await onBlockingThreads {
        let harness = try await Harness.make(kind)
        let imported = harness.post("/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts:batchCreate", [
            "users": [["localId": "p1", "email": "p1@test.com", "phoneNumber": "+15555550100",
                       "providerUserInfo": [["providerId": "google.com", "rawId": "g-123"]]]],
        ], admin: true)
        #expect(imported.status == 200 && imported.json["error"] == nil, "\(imported.json)")
        let signIn = harness.client("signInWithCustomToken", ["token": try harness.service.createCustomToken(uid: "p1"), "returnSecureToken": true])
        let claims = try harness.service.verifier.verify(try #require(signIn.json["idToken"] as? String)).claims
        #expect(claims.child("phone_number").stringValue == "+15555550100")
        #expect(claims.child(at: "firebase/identities/phone/0").stringValue == "+15555550100")
        #expect(claims.child(at: "firebase/identities/email/0").stringValue == "p1@test.com")
        #expect(claims.child(at: "firebase/identities/google.com/0").stringValue == "g-123")
    }
}
