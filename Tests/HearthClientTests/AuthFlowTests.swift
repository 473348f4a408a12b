import Foundation
import Testing
@testable import HearthClient

/// FirebaseAuth's email-link sign-in, action codes, unlinking, moving a user between Auth instances and
/// the token sequence, against a real `hearth serve --emulator` (the outbox holds the emailed links).
@Suite struct AuthFlowTests {
    let server: TestServer
    init() throws { server = try TestServer() }

    func makeAuth(name: String = UUID().uuidString) -> Auth {
        HearthClientTests.makeAuth(server, namespace: "auth-flows", app: name)
    }

    static func email() -> String { "f\(UUID().uuidString.prefix(8).lowercased())@example.com" }

    /// The newest entry the outbox holds for `email` and `requestType`: its code and its link.
    func outbox(_ email: String, _ requestType: String) throws -> (code: String, link: String)? {
        let (status, body) = try server.http("GET", "/emulator/v1/projects/demo-client/oobCodes", admin: false)
        #expect(status == 200)
        let codes = (try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["oobCodes"] as? [[String: Any]] ?? []
        guard let entry = codes.last(where: { $0["email"] as? String == email && $0["requestType"] as? String == requestType }),
            let code = entry["oobCode"] as? String, let link = entry["oobLink"] as? String
        else { return nil }
        return (code, link)
    }

    static func code(of work: () async throws -> Void) async -> AuthErrorCode? {
        do {
            try await work()
            return nil
        } catch {
            let error = error as NSError
            return error.domain == AuthErrors.domain ? AuthErrorCode(rawValue: error.code) : nil
        }
    }

    @Test func signingInWithAnEmailedLink() async throws {
        let auth = makeAuth()
        let email = Self.email()
        let settings = ActionCodeSettings()
        settings.url = URL(string: "http://localhost/finish")
        settings.handleCodeInApp = true
        try await auth.sendSignInLink(toEmail: email, actionCodeSettings: settings)
        let (_, link) = try #require(try outbox(email, "EMAIL_SIGNIN"))
        #expect(auth.isSignIn(withEmailLink: link))
        #expect(!auth.isSignIn(withEmailLink: "http://localhost/finish?mode=resetPassword&oobCode=x"))
        // Wrapped in another link (a redirect carrying it as `link`), as dynamic links do.
        let wrapped = "https://app.example.com/open?link=" + (link.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        #expect(auth.isSignIn(withEmailLink: wrapped))
        let result = try await auth.signIn(withEmail: email, link: wrapped)
        #expect(result.user.email == email && auth.currentUser?.uid == result.user.uid)
        #expect(result.user.isEmailVerified)
        // The link was spent.
        try auth.signOut()
        #expect(await Self.code { try await auth.signIn(withEmail: email, link: link) } == .invalidActionCode)
        // A credential from a new link signs in to the same account.
        try await auth.sendSignInLink(toEmail: email, actionCodeSettings: settings)
        let (_, second) = try #require(try outbox(email, "EMAIL_SIGNIN"))
        let again = try await auth.signIn(with: EmailAuthProvider.credential(withEmail: email, link: second))
        #expect(again.user.uid == result.user.uid)
        #expect(await Self.code { try await auth.sendSignInLink(toEmail: email, actionCodeSettings: ActionCodeSettings()) } == .missingContinueURI)
    }

    @Test func signInMethodsOfAnEmail() async throws {
        let auth = makeAuth()
        let email = Self.email()
        try await auth.createUser(withEmail: email, password: "secret123")
        // Hearth protects against email enumeration by default, as new Firebase projects do: nobody learns
        // which addresses have accounts, so the list is empty either way.
        #expect(try await auth.fetchSignInMethods(forEmail: email).isEmpty)
        #expect(try await auth.fetchSignInMethods(forEmail: Self.email()).isEmpty)
    }

    @Test func actionCodesSayWhatTheyAreForBeforeUse() async throws {
        let auth = makeAuth()
        let email = Self.email()
        try await auth.createUser(withEmail: email, password: "secret123")
        try await auth.sendPasswordReset(withEmail: email)
        let (code, _) = try #require(try outbox(email, "PASSWORD_RESET"))
        let info = try await auth.checkActionCode(code)
        #expect(info.operation == .passwordReset && info.email == email && info.previousEmail == nil)
        #expect(try await auth.verifyPasswordResetCode(code) == email)
        try await auth.confirmPasswordReset(withCode: code, newPassword: "another456")
        #expect(await Self.code { _ = try await auth.checkActionCode(code) } == .invalidActionCode)
        try await auth.signIn(withEmail: email, password: "another456")
        try await auth.currentUser?.sendEmailVerification()
        let (verify, _) = try #require(try outbox(email, "VERIFY_EMAIL"))
        #expect(try await auth.checkActionCode(verify).operation == .verifyEmail)
        try await auth.applyActionCode(verify)
        try await auth.currentUser?.reload()
        #expect(auth.currentUser?.isEmailVerified == true)
    }

    @Test func unlinkingASignInMethod() async throws {
        let auth = makeAuth()
        let anonymous = try await auth.signInAnonymously().user
        let email = Self.email()
        try await anonymous.link(with: EmailAuthProvider.credential(withEmail: email, password: "secret123"))
        #expect(anonymous.providerData.map(\.providerID) == ["password"])
        #expect(await Self.code { _ = try await anonymous.unlink(fromProvider: "google.com") } == .noSuchProvider)
        let user = try await anonymous.unlink(fromProvider: "password")
        #expect(user.uid == anonymous.uid && user.providerData.isEmpty && user.email == nil)
        try auth.signOut()
        #expect(await Self.code { try await auth.signIn(withEmail: email, password: "secret123") } != nil)
    }

    @Test func aUserOfAnotherAuthBecomesTheCurrentOne() async throws {
        let first = makeAuth()
        let second = makeAuth()
        let user = try await second.createUser(withEmail: Self.email(), password: "secret123").user
        #expect(first.currentUser == nil)
        try await first.updateCurrentUser(user)
        #expect(first.currentUser?.uid == user.uid)
        #expect(try await first.currentUser?.getIDToken().isEmpty == false)
        // A user of another project (API key) is refused and nothing changes.
        let other = HearthClientTests.makeAuth(server, namespace: "auth-flows", apiKey: "other-key")
        let stranger = try await other.signInAnonymously().user
        #expect(await Self.code { try await first.updateCurrentUser(stranger) } == .invalidUserToken)
        #expect(first.currentUser?.uid == user.uid)
    }

    @Test func idTokenChangesAndRevokingAnAppleToken() async throws {
        let auth = makeAuth()
        let tokens = Recorder<String>()
        let listening = Task {
            for await user in auth.idTokenChanges {
                tokens.append(user?.uid ?? "none")
                if tokens.all.count == 2 { return }
            }
        }
        #expect(await tokens.wait { $0 == ["none"] })
        let user = try await auth.signInAnonymously().user
        #expect(await tokens.wait { $0 == ["none", user.uid] })
        await listening.value
        // Without Sign in with Apple on the server, there is nothing to revoke: a clear refusal.
        #expect(await Self.code { try await auth.revokeToken(withAuthorizationCode: "code-from-apple") } == .operationNotAllowed)
    }
}
