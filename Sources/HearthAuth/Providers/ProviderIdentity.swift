import Foundation

/// Who a provider says the user is, once its token was verified.
struct ProviderIdentity {
    var providerId: String
    /// The user's id at the provider (`sub`, GitHub's and Facebook's numeric id).
    var rawId: String
    var email: String?
    var emailVerified: Bool
    var displayName: String?
    var photoUrl: String?
    /// GitHub's login.
    var screenName: String?
    var firstName: String?
    var lastName: String?
    /// What the provider said, as the response's `rawUserInfo` (a JSON object's text).
    var rawUserInfo: [String: Any]
    var oauthIdToken: String?
    var oauthAccessToken: String?

    /// The response's `federatedId`: Google's is a URL, as Firebase answers it.
    var federatedId: String { providerId == "google.com" ? "https://accounts.google.com/" + rawId : rawId }

    /// The entry kept on the account (`providerUserInfo`).
    var linkedProvider: LinkedProvider {
        var linked = LinkedProvider(providerId: providerId, rawId: rawId)
        linked.email = email
        linked.displayName = displayName
        linked.photoUrl = photoUrl
        linked.screenName = screenName
        return linked
    }

    /// The fields every signInWithIdp answer carries about the identity (docs/auth.md §2.13).
    var responseFields: [String: Any] {
        var fields: [String: Any] = [
            "kind": "identitytoolkit#VerifyAssertionResponse", "providerId": providerId, "federatedId": federatedId,
            "emailVerified": emailVerified, "rawUserInfo": JSONText.encode(rawUserInfo, sorted: true),
        ]
        if let email { fields["email"] = email }
        if let displayName {
            fields["displayName"] = displayName
            fields["fullName"] = displayName
        }
        if let photoUrl { fields["photoUrl"] = photoUrl }
        if let screenName { fields["screenName"] = screenName }
        if let firstName { fields["firstName"] = firstName }
        if let lastName { fields["lastName"] = lastName }
        if let oauthIdToken { fields["oauthIdToken"] = oauthIdToken }
        if let oauthAccessToken { fields["oauthAccessToken"] = oauthAccessToken }
        return fields
    }

    /// The identity an OpenID token's claims describe (Google, Apple, `oidc.*`, and the emulator's
    /// made-up tokens for any provider).
    static func fromClaims(_ claims: [String: Any], providerId: String, idToken: String?, accessToken: String?) -> ProviderIdentity? {
        guard let subject = Claims.identifier(claims["sub"]), !subject.isEmpty, subject.utf8.count <= 256 else { return nil }
        let email = Claims.string(claims["email"]).flatMap(AuthService.canonicalEmail)
        var identity = ProviderIdentity(
            providerId: providerId, rawId: subject, email: email, emailVerified: email != nil && Claims.bool(claims["email_verified"]) == true,
            displayName: Claims.string(claims["name"]), photoUrl: Claims.string(claims["picture"]),
            screenName: Claims.string(claims["screen_name"]), rawUserInfo: claims, oauthIdToken: idToken, oauthAccessToken: accessToken)
        if providerId == "google.com" {
            identity.firstName = Claims.string(claims["given_name"])
            identity.lastName = Claims.string(claims["family_name"])
            // What Firebase answers as Google's raw user info: its userinfo form, not the token's claims.
            var info: [String: Any] = ["id": subject, "verified_email": identity.emailVerified]
            for (from, to) in [("email", "email"), ("name", "name"), ("given_name", "given_name"), ("family_name", "family_name"),
                ("picture", "picture"), ("locale", "locale"), ("hd", "hd")]
            {
                if let value = Claims.string(claims[from]) { info[to] = value }
            }
            identity.rawUserInfo = info
        }
        return identity
    }
}
