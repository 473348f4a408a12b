import Foundation
import HearthProtocol

/// The three collections of provider configurations in Identity Toolkit's v2 admin API, with their
/// names on the wire.
enum ProviderConfigKind: CaseIterable {
    case oidc, saml, builtIn

    var collection: String {
        switch self {
        case .oidc: "oauthIdpConfigs"
        case .saml: "inboundSamlConfigs"
        case .builtIn: "defaultSupportedIdpConfigs"
        }
    }

    /// The query parameter of a create that names the new configuration.
    var idParameter: String {
        switch self {
        case .oidc: "oauthIdpConfigId"
        case .saml: "inboundSamlConfigId"
        case .builtIn: "idpId"
        }
    }

    /// Every field an update mask may name.
    var maskPaths: Set<String> {
        switch self {
        case .oidc: ["displayName", "enabled", "clientId", "issuer", "clientSecret", "responseType", "responseType.code", "responseType.idToken"]
        case .saml:
            [
                "displayName", "enabled", "idpConfig", "idpConfig.idpEntityId", "idpConfig.ssoUrl", "idpConfig.idpCertificates",
                "idpConfig.signRequest", "spConfig", "spConfig.spEntityId", "spConfig.callbackUri",
            ]
        case .builtIn: ["enabled", "clientId", "clientSecret", "appleSignInConfig", "appleSignInConfig.bundleIds"]
        }
    }

    /// Checks the id of a new configuration: `oidc.` or `saml.` and a name of letters, digits, `-`, `_`
    /// and `.`, or one of the supported built-in providers.
    func checkID(_ id: String) throws(AuthError) {
        switch self {
        case .oidc, .saml:
            let prefix = self == .oidc ? "oidc." : "saml."
            let name = id.dropFirst(prefix.count)
            guard id.hasPrefix(prefix), !name.isEmpty, id.utf8.count <= 100,
                name.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)) })
            else {
                throw AuthError.invalid("INVALID_CONFIG_ID", "\(self.collection) ids are \(prefix) and a name of letters, digits, -, _ and .")
            }
        case .builtIn:
            guard IdentityProviderConfigs.supportedBuiltIn.contains(where: { $0.id == id }) else {
                let supported = IdentityProviderConfigs.supportedBuiltIn.map(\.id).joined(separator: ", ")
                throw AuthError.invalid("INVALID_PROVIDER_ID", "\(id) is not supported by Hearth (\(supported) are)")
            }
        }
    }
}

/// A request body's fields at a dotted path of an update mask.
struct MaskedBody {
    let fields: [String: Any]

    /// The value at `path`; nil when absent or JSON null (a masked path without a value clears it).
    func value(_ path: String) -> Any? {
        var current: Any? = fields
        for part in path.split(separator: ".") {
            current = (current as? [String: Any])?[String(part)]
        }
        return current is NSNull ? nil : current
    }

    func string(_ path: String) throws(AuthError) -> String? {
        guard let value = value(path) else { return nil }
        guard let text = value as? String else { throw AuthError.invalid("INVALID_CONFIG", "\(path) must be a string") }
        return text
    }

    func bool(_ path: String) throws(AuthError) -> Bool? {
        guard let value = value(path) else { return nil }
        guard let flag = Claims.bool(value), !(value is String) else { throw AuthError.invalid("INVALID_CONFIG", "\(path) must be true or false") }
        return flag
    }

    func strings(_ path: String) throws(AuthError) -> [String]? {
        guard let value = value(path) else { return nil }
        guard let array = value as? [Any], let strings = array.map({ $0 as? String }) as? [String] else {
            throw AuthError.invalid("INVALID_CONFIG", "\(path) must be a list of strings")
        }
        return strings
    }

    /// Whether the mask names `path` or a path above it (`idpConfig` covers `idpConfig.ssoUrl`).
    static func covers(_ mask: Set<String>, _ path: String) -> Bool {
        if mask.contains(path) { return true }
        guard let dot = path.firstIndex(of: ".") else { return false }
        return mask.contains(String(path[..<dot]))
    }
}

/// An `https` URL (or `http` to loopback, for local providers), as configurations must name.
func checkedProviderURL(_ text: String, field: String) throws(AuthError) -> String {
    guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
        scheme == "https" || (scheme == "http" && (host == "localhost" || host.hasPrefix("127.") || host == "[::1]" || host == "::1"))
    else { throw AuthError.invalid("INVALID_CONFIG", "\(field) must be an https URL (http only to a loopback address)") }
    return text
}

extension OIDCProviderConfig {
    func resource(project: String) -> [String: Any] {
        var resource: [String: Any] = [
            "name": "projects/\(project)/oauthIdpConfigs/\(id)", "enabled": enabled, "clientId": clientId, "issuer": issuer,
            "responseType": ["idToken": idTokenResponse, "code": codeResponse],
        ]
        if let displayName { resource["displayName"] = displayName }
        if let clientSecret { resource["clientSecret"] = clientSecret }
        return resource
    }

    static func create(id: String, _ body: MaskedBody) throws(AuthError) -> Self {
        var config = Self(
            id: id, displayName: nil, enabled: false, clientId: "", issuer: "", clientSecret: nil, idTokenResponse: true, codeResponse: false)
        try config.apply(ProviderConfigKind.oidc.maskPaths, body, creating: true)
        return config
    }

    mutating func apply(_ mask: Set<String>, _ body: MaskedBody, creating: Bool = false) throws(AuthError) {
        if MaskedBody.covers(mask, "displayName") { displayName = try body.string("displayName") }
        if MaskedBody.covers(mask, "enabled") { enabled = try body.bool("enabled") ?? false }
        if MaskedBody.covers(mask, "clientId") { clientId = try body.string("clientId") ?? "" }
        if MaskedBody.covers(mask, "issuer") { issuer = try body.string("issuer") ?? "" }
        if MaskedBody.covers(mask, "clientSecret") { clientSecret = try body.string("clientSecret") }
        let responseTypeGiven = body.value("responseType") != nil
        if MaskedBody.covers(mask, "responseType.idToken") && (!creating || responseTypeGiven) {
            idTokenResponse = try body.bool("responseType.idToken") ?? false
        }
        if MaskedBody.covers(mask, "responseType.code") && (!creating || responseTypeGiven) {
            codeResponse = try body.bool("responseType.code") ?? false
        }
        try validate()
    }

    func validate() throws(AuthError) {
        guard !clientId.isEmpty else { throw AuthError.invalid("MISSING_OAUTH_CLIENT_ID") }
        guard !issuer.isEmpty else { throw AuthError.invalid("MISSING_ISSUER") }
        _ = try checkedProviderURL(issuer, field: "issuer")
        guard idTokenResponse != codeResponse else {
            throw AuthError.invalid("INVALID_OAUTH_RESPONSETYPE", "Exactly one of responseType.idToken and responseType.code must be true")
        }
        if codeResponse && (clientSecret ?? "").isEmpty {
            throw AuthError.invalid("MISSING_OAUTH_CLIENT_SECRET", "The code flow needs the client secret")
        }
    }
}

extension SAMLProviderConfig {
    func resource(project: String) -> [String: Any] {
        var idpConfig: [String: Any] = [
            "idpEntityId": idpEntityId, "ssoUrl": ssoUrl, "idpCertificates": idpCertificates.map { ["x509Certificate": $0] },
        ]
        if let signRequest { idpConfig["signRequest"] = signRequest }
        var resource: [String: Any] = [
            "name": "projects/\(project)/inboundSamlConfigs/\(id)", "enabled": enabled, "idpConfig": idpConfig,
            "spConfig": ["spEntityId": spEntityId, "callbackUri": callbackUri],
        ]
        if let displayName { resource["displayName"] = displayName }
        return resource
    }

    static func create(id: String, _ body: MaskedBody) throws(AuthError) -> Self {
        var config = Self(
            id: id, displayName: nil, enabled: false, idpEntityId: "", ssoUrl: "", idpCertificates: [], signRequest: nil, spEntityId: "",
            callbackUri: "")
        try config.apply(ProviderConfigKind.saml.maskPaths, body)
        return config
    }

    mutating func apply(_ mask: Set<String>, _ body: MaskedBody) throws(AuthError) {
        if MaskedBody.covers(mask, "displayName") { displayName = try body.string("displayName") }
        if MaskedBody.covers(mask, "enabled") { enabled = try body.bool("enabled") ?? false }
        if MaskedBody.covers(mask, "idpConfig.idpEntityId") { idpEntityId = try body.string("idpConfig.idpEntityId") ?? "" }
        if MaskedBody.covers(mask, "idpConfig.ssoUrl") { ssoUrl = try body.string("idpConfig.ssoUrl") ?? "" }
        if MaskedBody.covers(mask, "idpConfig.signRequest") { signRequest = try body.bool("idpConfig.signRequest") }
        if MaskedBody.covers(mask, "idpConfig.idpCertificates") {
            guard let entries = body.value("idpConfig.idpCertificates") as? [Any] ?? (body.value("idpConfig.idpCertificates") == nil ? [] : nil)
            else { throw AuthError.invalid("INVALID_CONFIG", "idpConfig.idpCertificates must be a list of {x509Certificate}") }
            var certificates: [String] = []
            for entry in entries {
                guard let certificate = (entry as? [String: Any])?["x509Certificate"] as? String else {
                    throw AuthError.invalid("INVALID_CONFIG", "idpConfig.idpCertificates must be a list of {x509Certificate}")
                }
                certificates.append(certificate)
            }
            idpCertificates = certificates
        }
        if MaskedBody.covers(mask, "spConfig.spEntityId") { spEntityId = try body.string("spConfig.spEntityId") ?? "" }
        if MaskedBody.covers(mask, "spConfig.callbackUri") { callbackUri = try body.string("spConfig.callbackUri") ?? "" }
        try validate()
    }

    func validate() throws(AuthError) {
        guard !idpEntityId.isEmpty, !ssoUrl.isEmpty, !idpCertificates.isEmpty else {
            throw AuthError.invalid("MISSING_SAML_IDP_CONFIG", "idpConfig needs idpEntityId, ssoUrl and idpCertificates")
        }
        guard !spEntityId.isEmpty, !callbackUri.isEmpty else {
            throw AuthError.invalid("MISSING_SAML_RELYING_PARTY_CONFIG", "spConfig needs spEntityId and callbackUri")
        }
        _ = try checkedProviderURL(ssoUrl, field: "idpConfig.ssoUrl")
        guard URLComponents(string: callbackUri)?.host?.isEmpty == false else {
            throw AuthError.invalid("INVALID_CONFIG", "spConfig.callbackUri must be a URL")
        }
    }
}

extension BuiltInProviderConfig {
    func resource(project: String) -> [String: Any] {
        var resource: [String: Any] = ["name": "projects/\(project)/defaultSupportedIdpConfigs/\(id)", "enabled": enabled, "clientId": clientId]
        if let clientSecret { resource["clientSecret"] = clientSecret }
        if id == "apple.com" { resource["appleSignInConfig"] = ["bundleIds": appleBundleIds] }
        return resource
    }

    static func create(id: String, _ body: MaskedBody) throws(AuthError) -> Self {
        var config = Self(id: id, enabled: false, clientId: "")
        try config.apply(ProviderConfigKind.builtIn.maskPaths, body)
        return config
    }

    mutating func apply(_ mask: Set<String>, _ body: MaskedBody) throws(AuthError) {
        if MaskedBody.covers(mask, "enabled") { enabled = try body.bool("enabled") ?? false }
        if MaskedBody.covers(mask, "clientId") { clientId = try body.string("clientId") ?? "" }
        if MaskedBody.covers(mask, "clientSecret") { clientSecret = try body.string("clientSecret") }
        if MaskedBody.covers(mask, "appleSignInConfig.bundleIds") { appleBundleIds = try body.strings("appleSignInConfig.bundleIds") ?? [] }
        guard !audiences.isEmpty else { throw AuthError.invalid("MISSING_OAUTH_CLIENT_ID", "\(id) needs its client ID") }
        if (id == "github.com" || id == "facebook.com") && enabled && (clientSecret ?? "").isEmpty {
            throw AuthError.invalid("MISSING_OAUTH_CLIENT_SECRET", "\(id) needs its client secret")
        }
    }
}
