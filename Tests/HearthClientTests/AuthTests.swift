import Foundation
import Synchronization
import Testing

@testable import HearthClient

/// HearthClient's Auth against a real `hearth serve --emulator`: accounts, errors as FirebaseAuth
/// reports them, the emailed flows through the server's outbox, and databases following the user.
@Suite struct AuthTests {
    let server: TestServer
    init() throws { server = try TestServer() }

    /// An app of its own on the test server, its auth keeping the user in `store`.
    func makeAuth(namespace: String = "auth", store: (any AuthUserStore)? = NoAuthUserStore(), name: String = UUID().uuidString) -> Auth {
        HearthClientTests.makeAuth(server, namespace: namespace, store: store, app: name)
    }

    static func email() -> String { "u\(UUID().uuidString.prefix(8).lowercased())@example.com" }

    /// The code of an auth error, as apps read it.
    static func code(_ error: any Error) -> AuthErrorCode? {
        let error = error as NSError
        return error.domain == AuthErrors.domain ? AuthErrorCode(rawValue: error.code) : nil
    }

    static func code(of work: () async throws -> Void) async -> AuthErrorCode? {
        do {
            try await work()
            return nil
        } catch {
            return code(error)
        }
    }

    /// The newest code the outbox holds for `email` and `requestType`.
    func outboxCode(for email: String, _ requestType: String) throws -> String? {
        let (status, body) = try server.http("GET", "/emulator/v1/projects/demo-client/oobCodes", admin: false)
        #expect(status == 200)
        let codes = (try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["oobCodes"] as? [[String: Any]] ?? []
        return codes.last { $0["email"] as? String == email && $0["requestType"] as? String == requestType }?["oobCode"] as? String
    }

    @Test func signUpSignOutAndSignInWithStateListeners() async throws {
        let auth = makeAuth()
        let states = Recorder<String>()
        let handle = auth.addStateDidChangeListener { _, user in states.append(user?.email ?? "nil") }
        #expect(await states.wait { $0 == ["nil"] })
        let email = Self.email()
        let created = try await auth.createUser(withEmail: email, password: "secret123")
        #expect(created.additionalUserInfo?.isNewUser == true)
        #expect(created.user.email == email)
        #expect(!created.user.isAnonymous && !created.user.isEmailVerified)
        #expect(created.user.providerData.map(\.providerID) == ["password"])
        #expect(auth.currentUser?.uid == created.user.uid)
        #expect(await states.wait { $0 == ["nil", email] })
        try auth.signOut()
        #expect(auth.currentUser == nil)
        #expect(await states.wait { $0 == ["nil", email, "nil"] })
        let signedIn = try await auth.signIn(withEmail: email, password: "secret123")
        #expect(signedIn.user.uid == created.user.uid)
        #expect(signedIn.additionalUserInfo?.isNewUser == false)
        #expect(await states.wait { $0 == ["nil", email, "nil", email] })
        auth.removeStateDidChangeListener(handle)
        // A listener added now hears the sign-out after the removed one would have: once it has, the
        // removed one has not.
        let after = Recorder<String>()
        let second = auth.addStateDidChangeListener { _, user in after.append(user?.email ?? "nil") }
        #expect(await after.wait { $0 == [email] })
        try auth.signOut()
        #expect(await after.wait { $0 == [email, "nil"] })
        auth.removeStateDidChangeListener(second)
        #expect(states.all.count == 4)
    }

    @Test func errorsCarryFirebaseAuthCodes() async throws {
        let auth = makeAuth()
        let email = Self.email()
        try await auth.createUser(withEmail: email, password: "secret123")
        try auth.signOut()
        #expect(await Self.code { try await auth.createUser(withEmail: email, password: "another1") } == .emailAlreadyInUse)
        #expect(await Self.code { try await auth.signIn(withEmail: email, password: "wrong-one") } == .invalidCredential)
        #expect(await Self.code { try await auth.signIn(withEmail: Self.email(), password: "secret123") } == .invalidCredential)
        #expect(await Self.code { try await auth.createUser(withEmail: "not an email", password: "secret123") } == .invalidEmail)
        do {
            try await auth.createUser(withEmail: Self.email(), password: "123")
            Issue.record("a 3-character password was accepted")
        } catch {
            let error = error as NSError
            #expect(Self.code(error) == .weakPassword)
            #expect(error.userInfo[AuthErrors.userInfoNameKey] as? String == "ERROR_WEAK_PASSWORD")
            #expect(error.localizedDescription.contains("6 characters"))
            #expect(error.userInfo[NSLocalizedFailureReasonErrorKey] as? String == "Password should be at least 6 characters")
        }
        // Refused before any request, as FirebaseAuth does.
        #expect(await Self.code { try await auth.createUser(withEmail: Self.email(), password: "") } == .weakPassword)
        #expect(await Self.code { try await auth.createUser(withEmail: "", password: "secret123") } == .missingEmail)
        #expect(await Self.code { try await auth.signIn(withEmail: email, password: "") } == .wrongPassword)
        // Nothing listens there: a network error, with the cause underneath.
        auth.useEmulator(withHost: "127.0.0.1", port: 9)
        do {
            try await auth.signIn(withEmail: email, password: "secret123")
            Issue.record("signed in through a closed port")
        } catch {
            #expect(Self.code(error) == .networkError)
            #expect((error as NSError).userInfo[NSUnderlyingErrorKey] != nil)
        }
    }

    @Test func completionBlocksRunOnTheCallbackQueue() async throws {
        let auth = makeAuth()
        let queue = DispatchQueue(label: "test.auth.completions")
        auth.callbackQueue = queue
        let outcome = Recorder<String>()
        auth.createUser(withEmail: Self.email(), password: "secret123") { result, error in
            dispatchPrecondition(condition: .onQueue(queue))
            outcome.append(result?.user.uid ?? "error: \(String(describing: error))")
        }
        #expect(await outcome.wait { $0.count == 1 })
        #expect(outcome.all.first == auth.currentUser?.uid)
        auth.signIn(withEmail: "nobody@example.com", password: "secret123") { result, error in
            outcome.append(error.flatMap { Self.code($0) }.map { "\($0)" } ?? "no error")
        }
        #expect(await outcome.wait { $0.count == 2 })
        #expect(outcome.all.last == "invalidCredential")
    }

    @Test func anonymousAccountsAndLinkingKeepTheUID() async throws {
        let auth = makeAuth()
        let anonymous = try await auth.signInAnonymously()
        #expect(anonymous.user.isAnonymous)
        #expect(try await auth.signInAnonymously().user.uid == anonymous.user.uid)
        let email = Self.email()
        let linked = try await anonymous.user.link(with: EmailAuthProvider.credential(withEmail: email, password: "secret123"))
        #expect(linked.user.uid == anonymous.user.uid)
        #expect(!linked.user.isAnonymous)
        #expect(linked.user.email == email)
        try auth.signOut()
        #expect(try await auth.signIn(withEmail: email, password: "secret123").user.uid == anonymous.user.uid)
    }

    @Test func tokensRefreshAndTokenListenersHearOfIt() async throws {
        let auth = makeAuth()
        let tokens = Recorder<String>()
        auth.addIDTokenDidChangeListener { _, user in tokens.append(user?.refreshToken ?? "nil") }
        let user = try await auth.createUser(withEmail: Self.email(), password: "secret123").user
        let first = try await user.getIDToken()
        #expect(try await user.getIDToken() == first)  // cached while fresh
        // Signed out, then signed in: two token changes; a forced refresh makes a third.
        #expect(await tokens.wait { $0.count == 2 })
        _ = try await user.getIDToken(forcingRefresh: true)
        #expect(await tokens.wait { $0.count == 3 })
        let result = try await user.getIDTokenResult()
        #expect(result.claims["user_id"] as? String == user.uid)
        #expect(result.signInProvider == "password")
        #expect(result.expirationDate > Date())
        #expect(tokens.all.first == "nil")
        // Concurrent refreshes share one request.
        async let a = user.getIDToken(forcingRefresh: true)
        async let b = user.getIDToken(forcingRefresh: true)
        let (ta, tb) = try await (a, b)
        #expect(ta == tb)
    }

    @Test func profileChangesPasswordChangesAndDeletion() async throws {
        let auth = makeAuth()
        let email = Self.email()
        let user = try await auth.createUser(withEmail: email, password: "secret123").user
        let change = user.createProfileChangeRequest()
        change.displayName = "Ada"
        change.photoURL = URL(string: "https://example.com/ada.png")
        try await change.commitChanges()
        #expect(user.displayName == "Ada")
        #expect(user.photoURL?.absoluteString == "https://example.com/ada.png")
        let clear = user.createProfileChangeRequest()
        clear.photoURL = nil
        try await clear.commitChanges()
        #expect(user.photoURL == nil && user.displayName == "Ada")
        try await user.updatePassword(to: "better456")
        #expect(auth.currentUser === user)
        _ = try await user.getIDToken(forcingRefresh: true)  // the new refresh token works
        try auth.signOut()
        #expect(await Self.code { try await auth.signIn(withEmail: email, password: "secret123") } == .invalidCredential)
        let again = try await auth.signIn(withEmail: email, password: "better456").user
        #expect(again.displayName == "Ada")
        let oldRefreshToken = try #require(again.refreshToken)
        try await again.delete()
        #expect(auth.currentUser == nil)
        // Another device still holding a refresh token hears that the account is gone (and signs out).
        let (status, body) = try server.http(
            "POST", "/securetoken.googleapis.com/v1/token?key=k", body: #"{"grantType":"refresh_token","refreshToken":"\#(oldRefreshToken)"}"#,
            admin: false)
        #expect(status == 400 && body.contains("USER_NOT_FOUND"))
        #expect(await Self.code { try await auth.signIn(withEmail: email, password: "better456") } == .invalidCredential)
    }

    @Test func emailVerificationAndPasswordResetThroughTheOutbox() async throws {
        let auth = makeAuth()
        let email = Self.email()
        let user = try await auth.createUser(withEmail: email, password: "secret123").user
        try await user.sendEmailVerification()
        let verify = try #require(try outboxCode(for: email, "VERIFY_EMAIL"))
        try await auth.applyActionCode(verify)
        #expect(!user.isEmailVerified)  // until reloaded
        try await user.reload()
        #expect(user.isEmailVerified)
        try auth.signOut()
        try await auth.sendPasswordReset(withEmail: email)
        let reset = try #require(try outboxCode(for: email, "PASSWORD_RESET"))
        #expect(try await auth.verifyPasswordResetCode(reset) == email)
        try await auth.confirmPasswordReset(withCode: reset, newPassword: "fresh789")
        #expect(await Self.code { try await auth.confirmPasswordReset(withCode: reset, newPassword: "again000") } == .invalidActionCode)
        #expect(try await auth.signIn(withEmail: email, password: "fresh789").user.isEmailVerified)
    }

    @Test func aDisabledAccountSignsTheAppOut() async throws {
        let auth = makeAuth()
        let states = Recorder<String>()
        let user = try await auth.createUser(withEmail: Self.email(), password: "secret123").user
        auth.addStateDidChangeListener { _, user in states.append(user?.uid ?? "nil") }
        #expect(await states.wait { $0 == [user.uid] })
        let (status, _) = try server.http(
            "POST", "/identitytoolkit.googleapis.com/v1/projects/demo-client/accounts:update",
            body: #"{"localId":"\#(user.uid)","disableUser":true}"#)
        #expect(status == 200)
        #expect(await Self.code { _ = try await user.getIDToken(forcingRefresh: true) } == .userDisabled)
        #expect(auth.currentUser == nil)
        #expect(await states.wait { $0 == [user.uid, "nil"] })
    }

    @Test func revokedSessionsSignTheAppOutThroughTheDatabase() async throws {
        // The admin revokes the user's sessions (firebase-admin's revoke_refresh_tokens): the server tells
        // the database connection (`auth_revoked`), which asks for a fresh token; the refresh is refused
        // and the app is signed out, without the app calling anything.
        let auth = makeAuth(namespace: "revoke")
        let database = Database.database(app: try #require(auth.app))
        database.callbackQueue = DispatchQueue(label: "test.revoke.callbacks")
        let user = try await auth.createUser(withEmail: Self.email(), password: "secret123").user
        let states = Recorder<String>()
        auth.addStateDidChangeListener { _, user in states.append(user?.uid ?? "nil") }
        database.reference(withPath: "x").observe(.value) { _ in }
        try await database.reference(withPath: "x").setValue(1)  // connected and authenticated
        try await Task.sleep(for: .seconds(1))  // validSince has a granularity of a second
        let (status, _) = try server.http(
            "POST", "/identitytoolkit.googleapis.com/v1/projects/demo-client/accounts:update",
            body: #"{"localId":"\#(user.uid)","validSince":"\#(Int(Date().timeIntervalSince1970))"}"#)
        #expect(status == 200)
        #expect(await states.wait(seconds: 15) { $0 == [user.uid, "nil"] })
        #expect(auth.currentUser == nil)
    }

    @Test func theSignedInUserSurvivesARestartInAnOwnerOnlyFile() async throws {
        let directory = NSTemporaryDirectory() + "hearth-auth-store-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = FileAuthUserStore(directory: directory, appName: "restart", apiKey: "test-key")
        let name = "auth-restart-\(UUID().uuidString)"
        let auth = makeAuth(store: store, name: name)
        let user = try await auth.createUser(withEmail: Self.email(), password: "secret123").user
        let mode = try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let directoryMode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
        #expect(directoryMode == 0o700)
        // The app ends; a new one with the same store starts signed in, and its token works.
        await FirebaseApp.app(name: name)!.delete()
        let restarted = makeAuth(store: store, name: name)
        #expect(restarted !== auth)
        let restored = try #require(restarted.currentUser)
        #expect(restored.uid == user.uid && restored.email == user.email)
        _ = try await restored.getIDToken(forcingRefresh: true)
        try await restored.reload()
        try restarted.signOut()
        #expect(!FileManager.default.fileExists(atPath: store.path))
    }

    @Test func databasesFollowTheSignedInUser() async throws {
        let rules = #"{"rules":{"private":{"$uid":{".read":"auth != null && auth.uid == $uid",".write":"auth != null && auth.uid == $uid"}}}}"#
        let (status, _) = try server.http("PUT", "/.settings/rules.json?ns=follow", body: rules)
        #expect(status == 200)
        let auth = makeAuth(namespace: "follow")
        let database = Database.database(app: try #require(auth.app))
        database.callbackQueue = DispatchQueue(label: "test.follow.callbacks")
        let user = try await auth.createUser(withEmail: Self.email(), password: "secret123").user
        let mine = database.reference(withPath: "private/\(user.uid)")
        try await mine.setValue("hello")
        let (readStatus, body) = try server.rest("GET", "/private/\(user.uid)", namespace: "follow")
        #expect(readStatus == 200 && body == #""hello""#)
        // Signed out: the connection drops its auth and the write is refused.
        try auth.signOut()
        do {
            try await mine.setValue("again")
            Issue.record("a signed-out write to private data was accepted")
        } catch {
            #expect((error as NSError).code == DatabaseErrorCode.permissionDenied.rawValue)
        }
        // Signed in again: writes work on the same connection.
        try await auth.signIn(withEmail: try #require(user.email), password: "secret123")
        try await mine.setValue("back")
        #expect(try server.rest("GET", "/private/\(user.uid)", namespace: "follow").1 == #""back""#)
    }

    @Test func authStateChangesStartsWithTheCurrentUser() async throws {
        let auth = makeAuth()
        let user = try await auth.signInAnonymously().user
        var iterator = auth.authStateChanges.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first??.uid == user.uid)
        try auth.signOut()
        let second = await iterator.next()
        #expect(second != nil && second! == nil)
    }
}
