import Foundation
import Testing
@testable import HearthClient

/// FirebaseAuth's provider credentials (Google, Apple, GitHub, Facebook, any OAuthProvider) through
/// `Auth.signIn(with:)`, `User.link(with:)`, `reauthenticate(with:)` and `unlink(fromProvider:)`, against a
/// real `hearth serve --emulator`, which takes made-up tokens (JSON claims) as Firebase's emulator does.
@Suite struct IdentityProviderSignInTests {
    let server: TestServer
    init() throws { server = try TestServer() }

    static func claims(_ sub: String, email: String? = nil, verified: Bool = true, name: String? = nil) -> String {
        var object: [String: Any] = ["sub": sub]
        if let email {
            object["email"] = email
            object["email_verified"] = verified
        }
        if let name { object["name"] = name }
        return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static func unique(_ prefix: String) -> String { prefix + UUID().uuidString.prefix(8).lowercased() }

    @Test func aGoogleCredentialSignsUpWithTheProvidersProfileAndCredential() async throws {
        let auth = makeAuth(server, namespace: "idp")
        let sub = Self.unique("g")
        let credential = GoogleAuthProvider.credential(withIDToken: Self.claims(sub, email: "\(sub)@example.com", name: "Grace"), accessToken: "ya29.fake")
        let result = try await auth.signIn(with: credential)
        #expect(result.additionalUserInfo?.isNewUser == true)
        #expect(result.additionalUserInfo?.providerID == "google.com")
        #expect(result.additionalUserInfo?.profile?["name"] as? String == "Grace")
        #expect(result.credential?.accessToken == "ya29.fake")
        #expect(result.user.email == "\(sub)@example.com")
        #expect(result.user.displayName == "Grace")
        #expect(result.user.providerID == "Firebase")
        let google = try #require(result.user.providerData.first { $0.providerID == "google.com" })
        #expect(google.uid == sub)
        let token = try await result.user.getIDTokenResult()
        #expect(token.signInProvider == "google.com")
        // Again: the same account, not new.
        let again = try await auth.signIn(with: GoogleAuthProvider.credential(withIDToken: Self.claims(sub), accessToken: ""))
        #expect(again.user.uid == result.user.uid)
        #expect(again.additionalUserInfo?.isNewUser == false)
    }

    @Test func anUnverifiedAddressThatIsAnotherAccountsMustBeConfirmed() async throws {
        let auth = makeAuth(server, namespace: "idp")
        let email = Self.unique("taken") + "@example.com"
        try await auth.createUser(withEmail: email, password: "secret123")
        try auth.signOut()
        let facebook = OAuthProvider.credential(providerID: .facebook, accessToken: Self.claims(Self.unique("fb"), email: email, verified: false))
        do {
            try await auth.signIn(with: facebook)
            Issue.record("signed in with an unverified address that is another account's")
        } catch {
            let error = error as NSError
            #expect(AuthErrorCode(rawValue: error.code) == .accountExistsWithDifferentCredential)
            #expect(error.userInfo[AuthErrors.userInfoEmailKey] as? String == email)
            #expect(error.userInfo[AuthErrors.userInfoUpdatedCredentialKey] is OAuthCredential)
        }
        #expect(auth.currentUser == nil)
    }

    @Test func linkingReauthenticatingAndUnlinking() async throws {
        let auth = makeAuth(server, namespace: "idp")
        let anonymous = try await auth.signInAnonymously().user
        let gitHubUser = Self.unique("gh")
        let gitHub = GitHubAuthProvider.credential(withToken: Self.claims(gitHubUser, name: "Octo"))
        let linked = try await anonymous.link(with: gitHub)
        #expect(linked.user.uid == anonymous.uid)
        #expect(!anonymous.isAnonymous)
        #expect(anonymous.providerData.map(\.providerID) == ["github.com"])
        // FirebaseAuth refuses a second link of the same provider before asking the server.
        await #expect(throws: (any Error).self) { try await anonymous.link(with: gitHub) }
        do {
            try await anonymous.link(with: gitHub)
        } catch {
            #expect(AuthErrorCode(rawValue: (error as NSError).code) == .providerAlreadyLinked)
        }
        // The same GitHub user on another account: in use, with the credential to sign in with instead.
        try auth.signOut()
        let other = try await auth.signInAnonymously().user
        do {
            try await other.link(with: gitHub)
            Issue.record("one GitHub user was linked to two accounts")
        } catch {
            let error = error as NSError
            #expect(AuthErrorCode(rawValue: error.code) == .credentialAlreadyInUse)
            let updated = try #require(error.userInfo[AuthErrors.userInfoUpdatedCredentialKey] as? OAuthCredential)
            let signedIn = try await auth.signIn(with: updated)
            #expect(signedIn.user.uid == anonymous.uid)
        }
        let current = try #require(auth.currentUser)
        // Reauthenticating as somebody else is userMismatch; as oneself, fine.
        do {
            try await current.reauthenticate(with: GitHubAuthProvider.credential(withToken: Self.claims(Self.unique("stranger"))))
            Issue.record("reauthenticated as a stranger")
        } catch {
            #expect(AuthErrorCode(rawValue: (error as NSError).code) == .userMismatch)
        }
        try await current.reauthenticate(with: gitHub)
        try await current.unlink(fromProvider: GitHubAuthProvider.id)
        #expect(current.providerData.isEmpty)
    }

    @Test func appleTakesTheNameTheDeviceGaveOnce() async throws {
        let auth = makeAuth(server, namespace: "idp")
        var name = PersonNameComponents()
        name.givenName = "Ada"
        name.familyName = "Lovelace"
        let credential = OAuthProvider.appleCredential(withIDToken: Self.claims(Self.unique("apple")), rawNonce: "nonce-1", fullName: name)
        let result = try await auth.signIn(with: credential)
        #expect(result.user.displayName == "Ada Lovelace")
        #expect(result.additionalUserInfo?.providerID == "apple.com")
    }

    @Test func aCredentialWithoutTokensIsRefusedBeforeAnyRequest() async throws {
        let auth = makeAuth(server, namespace: "idp")
        do {
            try await auth.signIn(with: OAuthProvider.credential(providerID: .custom("oidc.partner"), accessToken: ""))
            Issue.record("an empty credential signed in")
        } catch {
            #expect(AuthErrorCode(rawValue: (error as NSError).code) == .invalidCredential)
        }
    }
}
