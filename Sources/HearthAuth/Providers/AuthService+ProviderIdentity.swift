import Foundation
import HearthCrypto
import HearthOutbound
import HearthProtocol
import HearthSupport

/// Asking a provider who the user is: verifying its ID token against its published keys, or calling its
/// user API with the access token (docs/auth.md, "Identity providers"). Runs on the auth queue; every
/// request to a provider is bounded (ServerLimits.provider*), and keys are cached (``ProviderDocuments``).
extension AuthService {
    static let providerNotConfigured = AuthError.invalid("OPERATION_NOT_ALLOWED", "The identity provider configuration is not found.")

    func identity(for credential: IdpCredential) throws(AuthError) -> ProviderIdentity {
        if configuration.emulator { return try emulatorIdentity(credential) }
        guard let provider = identityProviders.provider(credential.providerId), provider.enabled else { throw Self.providerNotConfigured }
        switch provider {
        case .builtIn(let config):
            switch config.id {
            case "google.com": return try googleIdentity(credential, config)
            case "apple.com": return try appleIdentity(credential, config)
            case "github.com": return try gitHubIdentity(credential, config)
            case "facebook.com": return try facebookIdentity(credential, config)
            default: throw Self.providerNotConfigured
            }
        case .oidc(let config):
            return try oidcIdentity(credential, config)
        case .saml:
            throw AuthError.invalid("OPERATION_NOT_ALLOWED", "SAML sign-in is not supported by Hearth (its configurations are kept)")
        }
    }

    // MARK: OpenID tokens

    private func googleIdentity(_ credential: IdpCredential, _ config: BuiltInProviderConfig) throws(AuthError) -> ProviderIdentity {
        let endpoints = configuration.providerEndpoints
        if let idToken = credential.idToken {
            let claims = try verifiedClaims(
                idToken, keysURL: endpoints.googleKeys,
                expectations: ProviderTokenExpectations(issuers: endpoints.googleIssuers, audiences: config.audiences), rawNonce: credential.nonce)
            return try identity(claims, credential)
        }
        guard let accessToken = credential.accessToken else { throw Self.missingToken(credential.providerId) }
        // An access token alone says nothing about whom it was issued to: ask Google first.
        let info = try providerJSON(OutboundRequest(url: endpoints.googleTokenInfo + "?access_token=" + Self.queryEscaped(accessToken)), "Google")
        let audience = Claims.string(info["aud"]) ?? Claims.string(info["azp"]) ?? ""
        guard config.audiences.contains(audience) else {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: access_token audience is not for this project")
        }
        let user = try providerJSON(
            OutboundRequest(url: endpoints.googleUserInfo, headers: [("Authorization", "Bearer " + accessToken)]), "Google")
        guard let identity = ProviderIdentity.fromClaims(user, providerId: "google.com", idToken: nil, accessToken: accessToken) else {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: Google's user info has no sub")
        }
        return identity
    }

    private func appleIdentity(_ credential: IdpCredential, _ config: BuiltInProviderConfig) throws(AuthError) -> ProviderIdentity {
        guard let idToken = credential.idToken else { throw Self.missingToken(credential.providerId) }
        let endpoints = configuration.providerEndpoints
        var expectations = ProviderTokenExpectations(issuers: [endpoints.appleIssuer], audiences: config.audiences)
        expectations.requiresHashedNonce = true
        let claims = try verifiedClaims(idToken, keysURL: endpoints.appleKeys, expectations: expectations, rawNonce: credential.nonce)
        var identity = try identity(claims, credential)
        Self.takeAppleName(credential, into: &identity)
        return identity
    }

    /// Apple sends the user's name to the device once, at the first sign-in; the app passes it on.
    private static func takeAppleName(_ credential: IdpCredential, into identity: inout ProviderIdentity) {
        guard let name = credential.appleName else { return }
        let full = [name.first, name.last].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        if !full.isEmpty { identity.displayName = full }
        identity.firstName = name.first
        identity.lastName = name.last
    }

    private func oidcIdentity(_ credential: IdpCredential, _ config: OIDCProviderConfig) throws(AuthError) -> ProviderIdentity {
        guard let idToken = credential.idToken else {
            if credential.code != nil {
                throw AuthError.invalid("OPERATION_NOT_ALLOWED", "\(config.id): the authorization code flow is not supported by Hearth; send the ID token")
            }
            throw Self.missingToken(credential.providerId)
        }
        let discovery: OIDCDiscovery
        do {
            discovery = try providerDiscovery.document(at: OIDCDiscovery.url(issuer: config.issuer))
        } catch {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: \(config.id)'s discovery document could not be read: \(error)")
        }
        guard discovery.issuer == config.issuer else {
            throw AuthError.invalid(
                "INVALID_IDP_RESPONSE", "Invalid Idp Response: \(config.id)'s discovery document names issuer \(discovery.issuer), not \(config.issuer)")
        }
        let claims = try verifiedClaims(
            idToken, keysURL: discovery.keysURL, expectations: ProviderTokenExpectations(issuers: [config.issuer], audiences: [config.clientId]),
            rawNonce: credential.nonce)
        return try identity(claims, credential)
    }

    private func identity(_ claims: [String: Any], _ credential: IdpCredential) throws(AuthError) -> ProviderIdentity {
        guard let identity = ProviderIdentity.fromClaims(
            claims, providerId: credential.providerId, idToken: credential.idToken, accessToken: credential.accessToken)
        else { throw ProviderTokenRefusal.missingSubject.error }
        return identity
    }

    /// The claims of a provider's ID token whose signature, issuer, audience, times and nonce check out.
    func verifiedClaims(
        _ token: String, keysURL: String, expectations: ProviderTokenExpectations, rawNonce: String?
    ) throws(AuthError) -> [String: Any] {
        let jwt: ProviderJWT
        do { jwt = try ProviderJWT.parse(token) } catch { throw error.error }
        let kid = jwt.keyID ?? ""
        var keys = try keySet(keysURL)
        if keys.keys[kid] == nil { keys = try keySet(keysURL, refresh: true) }  // rotated since it was fetched?
        guard let key = keys.keys[kid] else { throw ProviderTokenRefusal.unknownKey(kid).error }
        guard key.verify(algorithm: jwt.algorithm, message: jwt.signingInput, signature: jwt.signature) else {
            throw ProviderTokenRefusal.badSignature.error
        }
        let now = nowSeconds
        do { try expectations.check(jwt.claims, rawNonce: rawNonce, now: now) } catch { throw error.error }
        if Claims.string(jwt.claims["nonce"]) != nil, rawNonce != nil {
            // A token bound to a nonce signs in once (Firebase: "Duplicate credential received").
            let expires = Claims.seconds(jwt.claims["exp"]) ?? now
            guard usedNonceTokens.firstUse(SHA256.hash(token), until: expires + Int64(ServerLimits.providerTokenClockSkewSeconds), now: now) else {
                throw ProviderTokenRefusal.replayed.error
            }
        }
        return jwt.claims
    }

    private func keySet(_ url: String, refresh: Bool = false) throws(AuthError) -> JSONWebKeySet {
        do {
            return try providerKeys.document(at: url, refresh: refresh)
        } catch {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: the provider's keys could not be read (\(error)); try again later")
        }
    }

    // MARK: Access tokens

    private func gitHubIdentity(_ credential: IdpCredential, _ config: BuiltInProviderConfig) throws(AuthError) -> ProviderIdentity {
        guard let accessToken = credential.accessToken else { throw Self.missingToken(credential.providerId) }
        let api = configuration.providerEndpoints.githubAPI
        let headers = [("Accept", "application/vnd.github+json"), ("X-GitHub-Api-Version", "2022-11-28")]
        // Only a token issued to this project's OAuth app signs in: GitHub checks it with the app's secret.
        if let secret = config.clientSecret {
            let basic = Base64URL.encodeStandard(Array("\(config.clientId):\(secret)".utf8))
            let check = try providerResponse(
                OutboundRequest(
                    url: "\(api)/applications/\(Self.pathEscaped(config.clientId))/token", method: "POST",
                    headers: headers + [("Authorization", "Basic " + basic), ("Content-Type", "application/json")],
                    body: JSONText.bytes(["access_token": accessToken])), "GitHub")
            guard check.status == 200 else {
                throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: the GitHub access token was not issued to this project's OAuth app")
            }
        }
        let authorized = headers + [("Authorization", "Bearer " + accessToken)]
        let user = try providerJSON(OutboundRequest(url: "\(api)/user", headers: authorized), "GitHub")
        guard let id = Claims.identifier(user["id"]), !id.isEmpty else {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: GitHub's user has no id")
        }
        var email = Claims.string(user["email"]).flatMap(Self.canonicalEmail)
        var verified = false
        // The primary address, if verified (needs the user:email scope; without it the public one, unverified).
        if let emails = try? providerResponse(OutboundRequest(url: "\(api)/user/emails", headers: authorized), "GitHub"), emails.status == 200,
            let list = (try? JSONSerialization.jsonObject(with: Data(emails.body))) as? [[String: Any]],
            let primary = list.first(where: { Claims.bool($0["primary"]) == true })
        {
            if let address = Claims.string(primary["email"]).flatMap(Self.canonicalEmail) {
                email = address
                verified = Claims.bool(primary["verified"]) == true
            }
        }
        return ProviderIdentity(
            providerId: "github.com", rawId: id, email: email, emailVerified: verified, displayName: Claims.string(user["name"]),
            photoUrl: Claims.string(user["avatar_url"]), screenName: Claims.string(user["login"]), rawUserInfo: user, oauthIdToken: nil,
            oauthAccessToken: accessToken)
    }

    private func facebookIdentity(_ credential: IdpCredential, _ config: BuiltInProviderConfig) throws(AuthError) -> ProviderIdentity {
        guard let accessToken = credential.accessToken else { throw Self.missingToken(credential.providerId) }
        let graph = configuration.providerEndpoints.facebookGraph
        let appToken = config.clientId + "|" + (config.clientSecret ?? "")
        let debug = try providerJSON(
            OutboundRequest(url: "\(graph)/debug_token?input_token=\(Self.queryEscaped(accessToken))&access_token=\(Self.queryEscaped(appToken))"),
            "Facebook")
        let data = debug["data"] as? [String: Any] ?? [:]
        guard Claims.bool(data["is_valid"]) == true, Claims.identifier(data["app_id"]) == config.clientId else {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Unsuccessful debug_token response from Facebook: the token is not valid for this app")
        }
        let user = try providerJSON(
            OutboundRequest(url: "\(graph)/me?fields=id,name,email,first_name,last_name,picture&access_token=\(Self.queryEscaped(accessToken))"),
            "Facebook")
        guard let id = Claims.identifier(user["id"]), !id.isEmpty else {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: Facebook's user has no id")
        }
        let picture = ((user["picture"] as? [String: Any])?["data"] as? [String: Any]).flatMap { Claims.string($0["url"]) }
        // Facebook does not vouch for addresses: its email is the account's, unverified, as in Firebase.
        return ProviderIdentity(
            providerId: "facebook.com", rawId: id, email: Claims.string(user["email"]).flatMap(Self.canonicalEmail), emailVerified: false,
            displayName: Claims.string(user["name"]), photoUrl: picture, screenName: nil, firstName: Claims.string(user["first_name"]),
            lastName: Claims.string(user["last_name"]), rawUserInfo: user, oauthIdToken: nil, oauthAccessToken: accessToken)
    }

    // MARK: Emulator

    /// Firebase's Auth emulator accepts any provider with a made-up token: JSON claims (`{"sub": "abc"}`),
    /// or a JWT whose signature is not checked. So does Hearth's emulator mode.
    private func emulatorIdentity(_ credential: IdpCredential) throws(AuthError) -> ProviderIdentity {
        if credential.providerId.hasPrefix("saml.") {
            throw AuthError.invalid("OPERATION_NOT_ALLOWED", "SAML sign-in is not supported by Hearth (its configurations are kept)")
        }
        for token in [credential.idToken, credential.accessToken].compactMap({ $0 }) {
            let claims: [String: Any]?
            if token.hasPrefix("{") {
                guard let object = JSONText.object(Array(token.utf8)) else {
                    throw AuthError.invalid("INVALID_IDP_RESPONSE", "Unable to parse id_token: not JSON (the emulator takes JSON claims or a JWT)")
                }
                claims = object
            } else {
                claims = CompactJWT.segment(token, 1).flatMap(JSONText.object)
            }
            guard let claims else { continue }
            guard var identity = ProviderIdentity.fromClaims(
                claims, providerId: credential.providerId, idToken: credential.idToken,
                accessToken: credential.accessToken ?? "FirebaseAuthEmulatorFakeAccessToken_\(credential.providerId)")
            else { throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: id_token missing required fields: \"sub\" (a string)") }
            if credential.providerId == "apple.com" { Self.takeAppleName(credential, into: &identity) }
            return identity
        }
        if credential.idToken != nil {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Unable to parse id_token (the emulator takes JSON claims or a JWT)")
        }
        throw Self.missingToken(credential.providerId)
    }

    // MARK: Requests to providers

    static func missingToken(_ providerId: String) -> AuthError {
        AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: no token for \(providerId) (id_token or access_token in postBody)")
    }

    private func providerResponse(_ request: OutboundRequest, _ provider: String) throws(AuthError) -> OutboundResponse {
        var request = request
        request.headers.append(("User-Agent", "Hearth"))
        do {
            return try configuration.fetcher.fetch(request)
        } catch {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: \(provider) could not be asked (\(error)); try again later")
        }
    }

    /// A provider's JSON object answer; its refusal (401, 400) is the credential's fault.
    private func providerJSON(_ request: OutboundRequest, _ provider: String) throws(AuthError) -> [String: Any] {
        let response = try providerResponse(request, provider)
        guard response.status == 200 else {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: \(provider) refused the token (HTTP \(response.status))")
        }
        guard let object = JSONText.object(response.body) else {
            throw AuthError.invalid("INVALID_IDP_RESPONSE", "Invalid Idp Response: \(provider) answered something other than a JSON object")
        }
        return object
    }

    static func queryEscaped(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    static func pathEscaped(_ text: String) -> String { queryEscaped(text) }
}

/// Tokens bound to a nonce that have signed in, until they expire: each signs in once.
final class UsedNonceTokens: Sendable {
    private let entries = Locked<[[UInt8]: Int64]>([:])
    static let capacity = 100_000

    /// Whether this is the token's first use; records it until `until` (seconds).
    func firstUse(_ tokenHash: [UInt8], until: Int64, now: Int64) -> Bool {
        entries.withLock { entries in
            if let expires = entries[tokenHash], expires > now { return false }
            if entries.count >= Self.capacity { entries = entries.filter { $0.value > now } }
            guard entries.count < Self.capacity else { return true }  // full of live tokens: remember no more
            entries[tokenHash] = until
            return true
        }
    }
}

/// Who a provider's token says the user is, once checked: what ``AuthService/verifyProviderToken(_:providerID:rawNonce:)`` answers.
public struct VerifiedProviderUser: Sendable, Equatable {
    public let providerID: String
    /// The user's id at the provider (`sub`).
    public let rawID: String
    public let email: String?
    public let emailVerified: Bool
}

extension AuthService {
    /// Checks a provider's ID token exactly as `accounts:signInWithIdp` does (keys, signature, issuer,
    /// audience, times, nonce), without signing anyone in: for a server that accepts provider tokens
    /// itself, and the `auth.idp` benchmark.
    public func verifyProviderToken(_ idToken: String, providerID: String, rawNonce: String? = nil) throws(AuthError) -> VerifiedProviderUser {
        let identity = try identity(for: IdpCredential(providerId: providerID, idToken: idToken, accessToken: nil, nonce: rawNonce))
        return VerifiedProviderUser(providerID: identity.providerId, rawID: identity.rawId, email: identity.email, emailVerified: identity.emailVerified)
    }

    /// Lookups of providers' key sets, and how many of them fetched: the keys cache's hit rate.
    public var providerKeyLookups: (lookups: Int, fetches: Int) { providerKeys.statistics }
}
