import Foundation
import HearthProtocol

/// What a `signInWithIdp` request carries from the provider, gathered as Firebase gathers it: the
/// parameters of `requestUri`'s query, then `postBody` (a form), then `requestUri`'s fragment, later
/// ones winning (the JS SDK's popup puts everything in `requestUri`; the iOS SDK in `postBody`).
struct IdpCredential: Equatable {
    var providerId: String
    var idToken: String?
    var accessToken: String?
    /// The raw nonce (Apple, OpenID): the token's `nonce` is its SHA-256.
    var nonce: String?
    var oauthTokenSecret: String?
    var code: String?
    /// Apple's first sign-in: the name the app got from the device, `{"name":{"firstName","lastName"}}`.
    var appleName: (first: String?, last: String?)?

    static func == (a: Self, b: Self) -> Bool {
        a.providerId == b.providerId && a.idToken == b.idToken && a.accessToken == b.accessToken && a.nonce == b.nonce
            && a.oauthTokenSecret == b.oauthTokenSecret && a.code == b.code && a.appleName?.first == b.appleName?.first
            && a.appleName?.last == b.appleName?.last
    }

    /// Parses the request's `requestUri` and `postBody`; Firebase's errors for what is missing.
    static func parse(requestUri: String?, postBody: String?) throws(AuthError) -> IdpCredential {
        guard let requestUri, !requestUri.isEmpty else { throw AuthError.invalid("MISSING_REQUEST_URI") }
        guard requestUri.utf8.count <= 64 * 1024, postBody.map({ $0.utf8.count <= 64 * 1024 }) ?? true else {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid IdP response/credential: the request is too large")
        }
        guard let url = URLComponents(string: requestUri), url.scheme != nil, url.host != nil else {
            throw AuthError.invalid("INVALID_REQUEST_URI")
        }
        var parameters: [String: String] = [:]
        for (name, value) in form(url.percentEncodedQuery ?? "") { parameters[name] = value }
        for (name, value) in form(postBody ?? "") { parameters[name] = value }
        for (name, value) in form(url.percentEncodedFragment ?? "") { parameters[name] = value }
        func value(_ name: String) -> String? { parameters[name].flatMap { $0.isEmpty ? nil : $0 } }
        guard let providerId = value("providerId")?.lowercased() else {
            throw AuthError.invalid("INVALID_CREDENTIAL_OR_PROVIDER_ID", "Invalid IdP response/credential: \(requestUri)")
        }
        for name in ["id_token", "access_token"] {
            if let token = value(name), token.utf8.count > ServerLimits.providerTokenBytesMax {
                throw ProviderTokenRefusal.tooLarge.error
            }
        }
        var credential = IdpCredential(
            providerId: providerId, idToken: value("id_token"), accessToken: value("access_token"), nonce: value("nonce"),
            oauthTokenSecret: value("oauth_token_secret"), code: value("code"))
        if let user = value("user"), let object = JSONText.object(Array(user.utf8)), let name = object["name"] as? [String: Any] {
            credential.appleName = (Claims.string(name["firstName"]), Claims.string(name["lastName"]))
        }
        return credential
    }

    /// `a=1&b=2` with `+` and percent escapes decoded; pairs without `=` have an empty value. The iOS
    /// SDK does not escape what it puts in `postBody`, so a value that does not decode is kept as sent.
    static func form(_ text: String) -> [(String, String)] {
        text.split(separator: "&").prefix(100).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? String(part)
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}
