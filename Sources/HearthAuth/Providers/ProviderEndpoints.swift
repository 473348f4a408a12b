import Foundation

/// Where the built-in providers' keys and user APIs are: the real services by default. An admin may
/// point them elsewhere (`hearth serve --provider-endpoints FILE`, a JSON object of these fields), which
/// is how the tests use local stand-ins; a client can never name a URL.
public struct ProviderEndpoints: Codable, Equatable, Sendable {
    /// Google ID tokens' accepted `iss` values.
    public var googleIssuers = ["https://accounts.google.com", "accounts.google.com"]
    public var googleKeys = "https://www.googleapis.com/oauth2/v3/certs"
    /// For a Google access token without an ID token: who it was issued to, then the user.
    public var googleTokenInfo = "https://oauth2.googleapis.com/tokeninfo"
    public var googleUserInfo = "https://openidconnect.googleapis.com/v1/userinfo"
    public var appleIssuer = "https://appleid.apple.com"
    public var appleKeys = "https://appleid.apple.com/auth/keys"
    /// GitHub's REST API root (`/user`, `/user/emails`, `/applications/{client_id}/token`).
    public var githubAPI = "https://api.github.com"
    /// Facebook's Graph API root (`/debug_token`, `/me`).
    public var facebookGraph = "https://graph.facebook.com"

    public init() {}

    /// These endpoints with the fields of a JSON object in place of the defaults.
    ///
    /// - Throws: ``Invalid`` naming the field that is not a string (or list of strings) or not an https
    ///   URL (http to loopback is allowed, for local providers).
    public init(overridingWith json: [UInt8]) throws {
        self.init()
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json))) as? [String: Any] else {
            throw Invalid(description: "provider endpoints: not a JSON object")
        }
        let urls: [(String, WritableKeyPath<ProviderEndpoints, String>)] = [
            ("googleKeys", \.googleKeys), ("googleTokenInfo", \.googleTokenInfo), ("googleUserInfo", \.googleUserInfo),
            ("appleKeys", \.appleKeys), ("githubAPI", \.githubAPI), ("facebookGraph", \.facebookGraph),
        ]
        let known = Set(urls.map(\.0) + ["googleIssuers", "appleIssuer"])
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw Invalid(description: "provider endpoints: unknown field \(unknown) (known: \(known.sorted().joined(separator: ", ")))")
        }
        for (name, path) in urls {
            guard let value = object[name] else { continue }
            guard let url = value as? String, (try? checkedProviderURL(url, field: name)) != nil else {
                throw Invalid(description: "provider endpoints: \(name) must be an https URL (http only to a loopback address)")
            }
            self[keyPath: path] = url
        }
        if let value = object["googleIssuers"] {
            guard let issuers = value as? [String], !issuers.isEmpty else {
                throw Invalid(description: "provider endpoints: googleIssuers must be a list of strings")
            }
            googleIssuers = issuers
        }
        if let value = object["appleIssuer"] {
            guard let issuer = value as? String, !issuer.isEmpty else { throw Invalid(description: "provider endpoints: appleIssuer must be a string") }
            appleIssuer = issuer
        }
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }
}

/// The two fields of an OpenID provider's discovery document that sign-in needs.
struct OIDCDiscovery: Sendable, Equatable {
    var issuer: String
    var keysURL: String

    init(json bytes: [UInt8]) throws(ProviderFetchFailure) {
        guard let document = JSONText.object(bytes), let issuer = Claims.string(document["issuer"]),
            let keys = Claims.string(document["jwks_uri"])
        else { throw ProviderFetchFailure(description: "not an OpenID discovery document (it needs issuer and jwks_uri)") }
        guard (try? checkedProviderURL(keys, field: "jwks_uri")) != nil else {
            throw ProviderFetchFailure(description: "its jwks_uri \(keys) is not an https URL")
        }
        self.issuer = issuer
        keysURL = keys
    }

    static func url(issuer: String) -> String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }
}
