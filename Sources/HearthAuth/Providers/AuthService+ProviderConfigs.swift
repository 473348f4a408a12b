import Foundation
import HearthCrypto
import HearthProtocol

/// Identity Toolkit's v2 admin API for provider configurations (`oauthIdpConfigs`,
/// `inboundSamlConfigs`, `defaultSupportedIdpConfigs`), under `/identitytoolkit.googleapis.com/v2/` or
/// `/identitytoolkit.googleapis.com/admin/v2/`, admin only (docs/auth.md, "Identity providers").
extension AuthService {
    /// The configurations in force (re-read at most once a second, ``SharedSetting``).
    var identityProviders: IdentityProviderConfigs { identityProvidersSetting.value }

    /// Answers `path` if it is a provider-configuration call; nil if it is not one.
    func providerConfigRoute(_ path: String, _ request: HTTPRequest, isAdmin: Bool) throws -> HTTPResponse? {
        var rest: Substring
        if path.hasPrefix("/identitytoolkit.googleapis.com/admin/v2/") {
            rest = path.dropFirst("/identitytoolkit.googleapis.com/admin/v2/".count)
        } else if path.hasPrefix("/identitytoolkit.googleapis.com/v2/") {
            rest = path.dropFirst("/identitytoolkit.googleapis.com/v2/".count)
        } else {
            return nil
        }
        if rest == "defaultSupportedIdps" {
            guard isAdmin else { throw AuthError.unauthenticated }
            let all = IdentityProviderConfigs.supportedBuiltIn.map { ["idpId": $0.id, "description": $0.description] }
            return .json(200, ["defaultSupportedIdps": all])
        }
        guard rest.hasPrefix("projects/") else { return nil }
        rest = rest.dropFirst("projects/".count)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 || parts.count == 3, let kind = ProviderConfigKind.allCases.first(where: { $0.collection == parts[1] }) else {
            return nil
        }
        guard isAdmin else { throw AuthError.unauthenticated }
        guard parts[0] == configuration.projectID else {
            throw AuthError.invalid("CONFIGURATION_NOT_FOUND", "this Hearth serves project \(configuration.projectID)")
        }
        let id = parts.count == 3 ? parts[2].removingPercentEncoding ?? parts[2] : nil
        switch (request.method, id) {
        case (.post, nil): return try createProviderConfig(kind, request)
        case (.get, nil): return try listProviderConfigs(kind, request)
        case (.get, let id?): return .json(200, try providerConfigResource(kind, id))
        case (.patch, let id?): return try patchProviderConfig(kind, id, request)
        case (.delete, let id?): return try deleteProviderConfig(kind, id)
        default: throw AuthError.notFound
        }
    }

    static func configurationNotFound(_ id: String) -> AuthError {
        AuthError.infrastructure(404, "NOT_FOUND", "CONFIGURATION_NOT_FOUND : \(id) is not configured", reason: "notFound")
    }

    private func providerConfigResource(_ kind: ProviderConfigKind, _ id: String) throws(AuthError) -> [String: Any] {
        let configs = identityProviders, project = configuration.projectID
        switch kind {
        case .oidc: if let config = configs.oidc[id] { return config.resource(project: project) }
        case .saml: if let config = configs.saml[id] { return config.resource(project: project) }
        case .builtIn: if let config = configs.builtIn[id] { return config.resource(project: project) }
        }
        throw Self.configurationNotFound(id)
    }

    private func createProviderConfig(_ kind: ProviderConfigKind, _ request: HTTPRequest) throws -> HTTPResponse {
        guard let id = request.query(kind.idParameter), !id.isEmpty else {
            throw AuthError.invalid("MISSING_CONFIG_ID", "the query parameter \(kind.idParameter) names the configuration")
        }
        try kind.checkID(id)
        let body = MaskedBody(fields: try RequestBody(bytes: request.body, form: false).fields)
        let project = configuration.projectID
        let resource = try identityProvidersSetting.update { configs -> [String: Any] in
            guard configs.provider(id) == nil else { throw AuthError.invalid("CONFIGURATION_EXISTS", "\(id) is already configured") }
            guard configs.count < ServerLimits.providerConfigsMax else {
                throw AuthError.invalid("QUOTA_EXCEEDED", "a project holds at most \(ServerLimits.providerConfigsMax) provider configurations")
            }
            switch kind {
            case .oidc:
                let config = try OIDCProviderConfig.create(id: id, body)
                configs.oidc[id] = config
                return config.resource(project: project)
            case .saml:
                let config = try SAMLProviderConfig.create(id: id, body)
                configs.saml[id] = config
                return config.resource(project: project)
            case .builtIn:
                let config = try BuiltInProviderConfig.create(id: id, body)
                configs.builtIn[id] = config
                return config.resource(project: project)
            }
        }
        providerKeys.clear()
        return .json(200, resource)
    }

    private func patchProviderConfig(_ kind: ProviderConfigKind, _ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let body = MaskedBody(fields: try RequestBody(bytes: request.body, form: false).fields)
        let mask = Set((request.query("updateMask") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        if let unknown = mask.subtracting(kind.maskPaths).sorted().first {
            throw AuthError.invalid("INVALID_CONFIG", "updateMask names \(unknown), which \(kind.collection) do not have")
        }
        let project = configuration.projectID
        let resource = try identityProvidersSetting.update { configs -> [String: Any] in
            switch kind {
            case .oidc:
                guard var config = configs.oidc[id] else { throw Self.configurationNotFound(id) }
                try config.apply(mask, body)
                configs.oidc[id] = config
                return config.resource(project: project)
            case .saml:
                guard var config = configs.saml[id] else { throw Self.configurationNotFound(id) }
                try config.apply(mask, body)
                configs.saml[id] = config
                return config.resource(project: project)
            case .builtIn:
                guard var config = configs.builtIn[id] else { throw Self.configurationNotFound(id) }
                try config.apply(mask, body)
                configs.builtIn[id] = config
                return config.resource(project: project)
            }
        }
        providerKeys.clear()
        return .json(200, resource)
    }

    private func deleteProviderConfig(_ kind: ProviderConfigKind, _ id: String) throws -> HTTPResponse {
        try identityProvidersSetting.update { configs in
            let removed: Bool
            switch kind {
            case .oidc: removed = configs.oidc.removeValue(forKey: id) != nil
            case .saml: removed = configs.saml.removeValue(forKey: id) != nil
            case .builtIn: removed = configs.builtIn.removeValue(forKey: id) != nil
            }
            guard removed else { throw Self.configurationNotFound(id) }
        }
        providerKeys.clear()
        return .json(200, [String: Any]())
    }

    /// A page of configurations in id order; the page token is the last id of the page before, opaque.
    private func listProviderConfigs(_ kind: ProviderConfigKind, _ request: HTTPRequest) throws(AuthError) -> HTTPResponse {
        let configs = identityProviders, project = configuration.projectID
        var resources: [(String, [String: Any])]
        switch kind {
        case .oidc: resources = configs.oidc.map { ($0.key, $0.value.resource(project: project)) }
        case .saml: resources = configs.saml.map { ($0.key, $0.value.resource(project: project)) }
        case .builtIn: resources = configs.builtIn.map { ($0.key, $0.value.resource(project: project)) }
        }
        resources.sort { $0.0 < $1.0 }
        var pageSize = 100
        if let text = request.query("pageSize") {
            guard let size = Int(text), size >= 0 else { throw AuthError.invalid("INVALID_PAGE_SIZE", "pageSize must be a whole number") }
            pageSize = size == 0 ? 100 : min(size, 100)
        }
        if let token = request.query("pageToken"), !token.isEmpty {
            guard let after = Base64URL.decode(token).map({ String(decoding: $0, as: UTF8.self) }) else {
                throw AuthError.invalid("INVALID_PAGE_SELECTION", "pageToken is not one this server gave")
            }
            resources.removeAll { $0.0 <= after }
        }
        let page = Array(resources.prefix(pageSize))
        var result: [String: Any] = [kind.collection: page.map(\.1)]
        if resources.count > page.count, let last = page.last { result["nextPageToken"] = Base64URL.encode(Array(last.0.utf8)) }
        return .json(200, result)
    }
}
