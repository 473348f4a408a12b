import Foundation
import HearthProtocol

/// A built-in identity provider switched on for the project (Firebase's `defaultSupportedIdpConfigs`):
/// the client IDs its tokens must be issued to, and its secret where it has one.
public struct BuiltInProviderConfig: Codable, Equatable, Sendable {
    /// `google.com`, `apple.com`, `facebook.com`, `github.com`.
    public var id: String
    public var enabled: Bool
    /// The OAuth client ID: a Google ID token's `aud`, Apple's Services ID, Facebook's app ID, GitHub's
    /// OAuth app.
    public var clientId: String
    public var clientSecret: String?
    /// Apple: the app bundle IDs whose tokens are accepted too (a native app's token has its bundle ID
    /// as `aud`).
    public var appleBundleIds: [String] = []

    public init(id: String, enabled: Bool, clientId: String, clientSecret: String? = nil) {
        self.id = id
        self.enabled = enabled
        self.clientId = clientId
        self.clientSecret = clientSecret
    }

    /// The client IDs a token's `aud` may name.
    var audiences: [String] {
        var all = clientId.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        all += appleBundleIds
        return all
    }
}

/// An OpenID Connect provider (`oidc.*`, Firebase's `oauthIdpConfigs`).
public struct OIDCProviderConfig: Codable, Equatable, Sendable {
    public var id: String
    public var displayName: String?
    public var enabled: Bool
    public var clientId: String
    /// Exactly the provider's `iss`; its discovery document is at `<issuer>/.well-known/openid-configuration`.
    public var issuer: String
    public var clientSecret: String?
    public var idTokenResponse: Bool
    public var codeResponse: Bool
}

/// A SAML provider (`saml.*`, Firebase's `inboundSamlConfigs`): kept and served to admins; signing in
/// with it is not supported by Hearth.
public struct SAMLProviderConfig: Codable, Equatable, Sendable {
    public var id: String
    public var displayName: String?
    public var enabled: Bool
    public var idpEntityId: String
    public var ssoUrl: String
    public var idpCertificates: [String]
    public var signRequest: Bool?
    public var spEntityId: String
    public var callbackUri: String
}

/// The project's identity providers: the setting `identity_providers` (``AuthSettingName``), as JSON.
public struct IdentityProviderConfigs: Codable, Equatable, Sendable {
    public var builtIn: [String: BuiltInProviderConfig] = [:]
    public var oidc: [String: OIDCProviderConfig] = [:]
    public var saml: [String: SAMLProviderConfig] = [:]

    public init() {}

    /// The built-in providers whose sign-in Hearth verifies, with what Firebase's console calls them.
    public static let supportedBuiltIn: [(id: String, description: String)] = [
        ("apple.com", "Apple"), ("facebook.com", "Facebook"), ("github.com", "GitHub"), ("google.com", "Google"),
    ]

    var count: Int { builtIn.count + oidc.count + saml.count }

    /// Stored form (sorted keys, so a file diff shows what changed).
    public var storedJSON: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public init?(storedJSON text: String) {
        guard let decoded = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)) else { return nil }
        self = decoded
    }

    /// The provider a sign-in names, if it is configured (enabled or not).
    func provider(_ id: String) -> ConfiguredProvider? {
        if let config = builtIn[id] { return .builtIn(config) }
        if let config = oidc[id] { return .oidc(config) }
        if let config = saml[id] { return .saml(config) }
        return nil
    }
}

/// One configured provider, whichever kind.
enum ConfiguredProvider {
    case builtIn(BuiltInProviderConfig)
    case oidc(OIDCProviderConfig)
    case saml(SAMLProviderConfig)

    var enabled: Bool {
        switch self {
        case .builtIn(let config): config.enabled
        case .oidc(let config): config.enabled
        case .saml(let config): config.enabled
        }
    }
}
