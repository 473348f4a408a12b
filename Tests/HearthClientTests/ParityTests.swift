import Foundation
import Testing
@testable import HearthClient

/// Behaviour where HearthClient once differed from FirebaseDatabase and FirebaseAuth 12, each checked as
/// an app would see it, against a real `hearth serve`.
@Suite struct ParityTests {
    let server: TestServer
    init() throws { server = try TestServer() }

    @Test func aRefusedSingleReadCallsTheCancelBlockWithPermissionDenied() async throws {
        let (status, _) = try server.http("PUT", "/.settings/rules.json?ns=parity-refused", body: #"{"rules":{"open":{".read":true}}}"#)
        #expect(status == 200)
        let database = makeDatabase(server, namespace: "parity-refused")
        let outcome = Recorder<String>()
        database.reference(withPath: "secret").observeSingleEvent(of: .value, with: { snapshot in
            outcome.append("data \(json(snapshot))")
        }, withCancel: { error in
            let error = error as NSError
            outcome.append("cancel \(error.domain) \(error.code)")
        })
        #expect(await outcome.wait { !$0.isEmpty })
        #expect(outcome.all == ["cancel com.firebase \(DatabaseErrorCode.permissionDenied.rawValue)"])
        // A read the rules allow still gets its data.
        database.reference(withPath: "open").observeSingleEvent(of: .value, with: { outcome.append("data \(json($0))") })
        #expect(await outcome.wait { $0.count == 2 })
        #expect(outcome.all.last == "data null")
    }

    @Test func aPriorityThatIsNotThereIsNSNull() async throws {
        let database = makeDatabase(server, namespace: "parity-priority")
        let ref = database.reference(withPath: "item")
        try await ref.setValue("plain")
        let plain = try await ref.getData()
        #expect(plain.priority is NSNull)
        try await ref.setValue("ranked", andPriority: 3)
        #expect(try await ref.getData().priority as? Int == 3)
        let seen = Recorder<Bool>()
        _ = try await database.reference(withPath: "other").runTransactionBlock { data in
            seen.append(data.priority is NSNull)
            return .success(withValue: data)
        }
        #expect(seen.all.first == true)
    }

    @Test func aReferencesURLReadsBackToTheSameReference() throws {
        let database = makeDatabase(server, namespace: "parity-url")
        let ref = database.reference(withPath: "users/ada lovelace/posts")
        // The namespace is not in the host: the URL says it with ?ns=, as FirebaseDatabase's does.
        #expect(ref.url == "http://127.0.0.1:\(server.port)/users/ada%20lovelace/posts?ns=parity-url")
        let again = database.reference(fromURL: ref.url)
        #expect(again.url == ref.url)
        #expect(again.key == "posts")
        #expect(database.reference().url == "http://127.0.0.1:\(server.port)/?ns=parity-url")
        // A host that names its namespace needs no parameter.
        let hosted = Database.database(url: "https://parity-hosted.firebaseio.com")
        #expect(hosted.reference(withPath: "a/b").url == "https://parity-hosted.firebaseio.com/a/b")
        #expect(hosted.reference(fromURL: "https://parity-hosted.firebaseio.com/a/b").url == "https://parity-hosted.firebaseio.com/a/b")
    }

    @Test func withoutADatabaseURLTheProjectsDefaultDatabaseIsUsed() {
        let name = "parity-default-\(UUID().uuidString)"
        let options = FirebaseOptions(googleAppID: "1:1:test", gcmSenderID: "1")
        options.projectID = "my-project"
        FirebaseApp.configure(name: name, options: options)
        let database = Database.database(app: FirebaseApp.app(name: name)!)
        #expect(database.reference().url == "https://my-project-default-rtdb.firebaseio.com/")
    }

    @Test func aProfileChangeLeavesWhatItWasNotGivenAlone() async throws {
        let auth = makeAuth(server, namespace: "parity-profile")
        let user = try await auth.createUser(withEmail: "profile-\(UUID().uuidString.prefix(6))@example.com", password: "secret123").user
        let both = user.createProfileChangeRequest()
        both.displayName = "Ada"
        both.photoURL = URL(string: "https://example.com/ada.png")
        try await both.commitChanges()
        let nameOnly = user.createProfileChangeRequest()
        nameOnly.displayName = "Ada L."
        try await nameOnly.commitChanges()
        #expect(user.displayName == "Ada L.")
        #expect(user.photoURL?.absoluteString == "https://example.com/ada.png")
        let photoOnly = user.createProfileChangeRequest()
        photoOnly.photoURL = nil
        try await photoOnly.commitChanges()
        #expect(user.displayName == "Ada L.")
        #expect(user.photoURL == nil)
    }

    @Test func authErrorsCastAsFirebaseAuth12s() async throws {
        let auth = makeAuth(server, namespace: "parity-errors")
        let email = "taken-\(UUID().uuidString.prefix(6))@example.com"
        try await auth.createUser(withEmail: email, password: "secret123")
        do {
            try await auth.createUser(withEmail: email, password: "secret123")
            Issue.record("a second account with the same email was made")
        } catch {
            // The spelling FirebaseAuth 12's documentation uses: the NSError's code.
            #expect(AuthErrorCode(rawValue: (error as NSError).code) == .emailAlreadyInUse)
            #expect((error as NSError).domain == AuthErrors.domain)
            // FirebaseAuth 12's AuthErrorCode is an Error type, but what is thrown is an NSError in
            // FIRAuthErrorDomain: the cast gives nil there, and here.
            let thrown: Any = error
            #expect(thrown as? AuthErrorCode == nil)
            let asError: any Error = AuthErrorCode.emailAlreadyInUse
            #expect(asError is AuthErrorCode)
            #expect((error as NSError).userInfo[AuthErrors.userInfoNameKey] as? String == "ERROR_EMAIL_ALREADY_IN_USE")
        }
    }
}

/// FirebaseAuth's `FIRAuthErrorUserInfoNameKey` names, including those that do not follow the pattern.
@Suite struct AuthErrorNameTests {
    @Test(arguments: [
        (AuthErrorCode.emailAlreadyInUse, "ERROR_EMAIL_ALREADY_IN_USE"), (.networkError, "ERROR_NETWORK_REQUEST_FAILED"),
        (.invalidAPIKey, "ERROR_INVALID_API_KEY"), (.invalidProviderID, "ERROR_INVALID_PROVIDER_ID"),
        (.missingAndroidPackageName, "ERROR_MISSING_ANDROID_PKG_NAME"), (.missingAppCredential, "MISSING_APP_CREDENTIAL"),
        (.accountExistsWithDifferentCredential, "ERROR_ACCOUNT_EXISTS_WITH_DIFFERENT_CREDENTIAL"),
        (.missingOrInvalidNonce, "ERROR_MISSING_OR_INVALID_NONCE"),
    ])
    func namesAreFirebaseAuths(code: AuthErrorCode, name: String) {
        #expect(AuthFailure.name(of: code) == name)
    }
}
