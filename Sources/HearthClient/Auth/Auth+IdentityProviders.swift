import Foundation

/// Signing in, linking and reauthenticating with an identity provider's credential
/// (`accounts:signInWithIdp`), as FirebaseAuth does it.
extension Auth {
    /// The server's answer for `credential`. `idToken` links to that signed-in user; `autoCreate: false`
    /// (reauthentication) makes no account. Answers that are refusals in a 200 become FirebaseAuth's
    /// errors, carrying the address and the provider's credential so the app can recover:
    /// `needConfirmation` → `accountExistsWithDifferentCredential`, `errorMessage` → its code
    /// (`credentialAlreadyInUse`, `emailAlreadyInUse`).
    func identityProviderAnswer(_ credential: OAuthCredential, linkingTo idToken: String? = nil, autoCreate: Bool = true) async throws
        -> [String: Any]
    {
        var body: [String: Any] = [
            "requestUri": "http://localhost", "postBody": credential.postBody, "returnSecureToken": true, "returnIdpCredential": true,
            "autoCreate": autoCreate,
        ]
        if let idToken { body["idToken"] = idToken }
        let answer = try await backend.call("signInWithIdp", body)
        if answer["needConfirmation"] as? Bool == true {
            throw AuthFailure.recoverable(
                AuthFailure.error(.accountExistsWithDifferentCredential), email: answer["email"] as? String,
                credential: OAuthCredential.fromAnswer(answer) ?? credential)
        }
        if let message = answer["errorMessage"] as? String {
            throw AuthFailure.recoverable(
                AuthFailure.server(message: message), email: answer["email"] as? String, credential: OAuthCredential.fromAnswer(answer) ?? credential)
        }
        return answer
    }
}
