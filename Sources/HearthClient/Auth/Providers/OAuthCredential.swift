import Foundation

/// A credential from an identity provider, as `OAuthCredential` in FirebaseAuth: the provider's ID
/// token and/or access token (OAuth 1's secret for Twitter), and what only the SDK reads (Apple's raw
/// nonce and the user's name).
open class OAuthCredential: AuthCredential, @unchecked Sendable {  // immutable
    public let idToken: String?
    public let accessToken: String?
    public let secret: String?
    let rawNonce: String?
    let fullName: PersonNameComponents?

    init(providerID: String, idToken: String?, accessToken: String?, secret: String? = nil, rawNonce: String? = nil, fullName: PersonNameComponents? = nil) {
        self.idToken = idToken
        self.accessToken = accessToken
        self.secret = secret
        self.rawNonce = rawNonce
        self.fullName = fullName
        super.init(provider: providerID, kind: .identityProvider)
    }

    /// The credential a sign-in's answer carries (`oauthIdToken`, `oauthAccessToken`), for
    /// ``AuthDataResult/credential`` and for errors that let the app sign in with it afterwards.
    static func fromAnswer(_ answer: [String: Any]) -> OAuthCredential? {
        guard let provider = answer["providerId"] as? String else { return nil }
        let idToken = answer["oauthIdToken"] as? String, accessToken = answer["oauthAccessToken"] as? String
        guard idToken != nil || accessToken != nil else { return nil }
        return OAuthCredential(providerID: provider, idToken: idToken, accessToken: accessToken, secret: answer["oauthTokenSecret"] as? String)
    }

    /// The `postBody` of `accounts:signInWithIdp`, in FirebaseAuth's order, each value escaped.
    var postBody: String {
        var fields: [(String, String)] = [("providerId", provider)]
        if let idToken { fields.append(("id_token", idToken)) }
        if let rawNonce { fields.append(("nonce", rawNonce)) }
        if let accessToken { fields.append(("access_token", accessToken)) }
        if let secret { fields.append(("oauth_token_secret", secret)) }
        if let fullName, fullName.givenName != nil || fullName.familyName != nil {
            var name: [String: String] = [:]
            if let given = fullName.givenName { name["firstName"] = given }
            if let family = fullName.familyName { name["lastName"] = family }
            if let data = try? JSONSerialization.data(withJSONObject: ["name": name], options: [.sortedKeys]) {
                fields.append(("user", String(decoding: data, as: UTF8.self)))
            }
        }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }
}
