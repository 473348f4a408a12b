import Foundation

/// Signing in with an emailed link (FirebaseAuth's passwordless email sign-in): send the link, then,
/// when the app opens it, sign in with the address the link was sent to.
///
///     let settings = ActionCodeSettings()
///     settings.url = URL(string: "https://app.example.com/finish")
///     settings.handleCodeInApp = true
///     try await Auth.auth().sendSignInLink(toEmail: "ann@example.com", actionCodeSettings: settings)
///     // … the app is opened with the link:
///     if Auth.auth().isSignIn(withEmailLink: link) {
///         let result = try await Auth.auth().signIn(withEmail: "ann@example.com", link: link)
///     }
extension Auth {
    /// Emails a sign-in link to `email`; `actionCodeSettings.url` is where it continues (it must be on an
    /// authorized domain: `--authorized-domains`, or localhost) and `handleCodeInApp` should be true, as
    /// Firebase asks.
    public func sendSignInLink(toEmail email: String, actionCodeSettings: ActionCodeSettings) async throws {
        guard !email.isEmpty else { throw AuthFailure.error(.missingEmail) }
        guard actionCodeSettings.url != nil else { throw AuthFailure.error(.missingContinueURI) }
        var body: [String: Any] = ["requestType": "EMAIL_SIGNIN", "email": email]
        actionCodeSettings.add(to: &body)
        _ = try await backend.call("sendOobCode", body)
    }

    public func sendSignInLink(
        toEmail email: String, actionCodeSettings: ActionCodeSettings, completion: (((any Error)?) -> Void)? = nil
    ) {
        let settings = AuthCallbacks.Unchecked(actionCodeSettings)
        complete(completion) { try await self.sendSignInLink(toEmail: email, actionCodeSettings: settings.value) }
    }

    /// Whether `link` is an emailed sign-in link (it carries `mode=signIn` and a code, itself or in the
    /// link it wraps).
    public func isSignIn(withEmailLink link: String) -> Bool { EmailLink.code(in: link) != nil }

    /// Signs in with the link emailed to `email` (a new account when there is none).
    @discardableResult
    public func signIn(withEmail email: String, link: String) async throws -> AuthDataResult {
        try await signIn(with: EmailAuthProvider.credential(withEmail: email, link: link))
    }

    public func signIn(withEmail email: String, link: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.signIn(withEmail: email, link: link) }
    }

    /// The sign-in methods of the account with this email (`password`, `emailLink`, providers); empty
    /// when there is none, and always empty under email enumeration protection (Firebase's default for
    /// new projects, and Hearth's: docs/auth.md).
    public func fetchSignInMethods(forEmail email: String) async throws -> [String] {
        let answer = try await backend.call("createAuthUri", ["identifier": email, "continueUri": "http://localhost"])
        return answer["signinMethods"] as? [String] ?? []
    }

    public func fetchSignInMethods(forEmail email: String, completion: (([String]?, (any Error)?) -> Void)? = nil) {
        complete(completion) { try await self.fetchSignInMethods(forEmail: email) }
    }
}
