import Foundation
import HearthAuth
import HearthAuthSQLite
import HearthOutbound
import HearthProtocol

/// Signing in with an identity provider (accounts:signInWithIdp): the client's `requestUri` and
/// `postBody` (the form of tokens, nonces and Apple's name), and every answer the providers give (key
/// sets, discovery documents, GitHub's and Facebook's user APIs), all made up by the fuzzer, through
/// the service's own routing with every provider configured. Properties: every answer is a status in
/// 200–599; and no made-up ID token signs in, since no signature the fuzzer makes up verifies (the keys
/// it serves may be its own, but it cannot compute an RSA or ECDSA signature).
///
/// Input: `requestUri`, a newline, `postBody`, a newline, then what every provider URL answers.
enum IdentityProviderFuzzing {
    static let target = FuzzTarget(
        name: "idp", input: "requestUri, newline, postBody, newline, then every provider URL's answer", run: run)

    /// The provider answers of the current input (the fuzzer runs one input at a time).
    final class MadeUpProviders: HTTPFetching, @unchecked Sendable {  // `answer` only set between inputs
        var answer: [UInt8] = []
        func fetch(_ request: OutboundRequest) throws(OutboundError) -> OutboundResponse {
            OutboundResponse(status: 200, headers: ["cache-control": "max-age=0"], body: answer)
        }
    }

    static let providers = MadeUpProviders()

    static let service: AuthService? = {
        let directory = NSTemporaryDirectory() + "hearth-fuzz-idp-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = AuthConfiguration(projectID: "demo-fuzz", emulator: false, adminToken: "fuzz-admin")
        configuration.fetcher = providers
        guard let service = try? AuthService.open(dataDirectory: directory, configuration: configuration) else { return nil }
        let admin = ["authorization": "Bearer fuzz-admin", "content-type": "application/json"]
        let configs: [(String, String, String)] = [
            ("defaultSupportedIdpConfigs", "idpId=google.com", #"{"enabled":true,"clientId":"c"}"#),
            ("defaultSupportedIdpConfigs", "idpId=apple.com", #"{"enabled":true,"clientId":"c"}"#),
            ("defaultSupportedIdpConfigs", "idpId=github.com", #"{"enabled":true,"clientId":"c","clientSecret":"s"}"#),
            ("defaultSupportedIdpConfigs", "idpId=facebook.com", #"{"enabled":true,"clientId":"c","clientSecret":"s"}"#),
            ("oauthIdpConfigs", "oauthIdpConfigId=oidc.f", #"{"enabled":true,"clientId":"c","issuer":"https://issuer.example"}"#),
        ]
        for (collection, query, body) in configs {
            let parts = query.split(separator: "=").map(String.init)
            _ = service.handle(HTTPRequest(
                method: .post, path: "/identitytoolkit.googleapis.com/v2/projects/demo-fuzz/\(collection)", queryItems: [(parts[0], parts[1])],
                headers: admin, body: Array(body.utf8)))
        }
        return service
    }()

    static let signedProviders: Set<String> = ["google.com", "apple.com", "oidc.f"]

    static func run(_ bytes: [UInt8]) {
        guard let service else { return }
        let (uri, rest) = Array(bytes).splitOnce(at: 10)
        let (postBody, answer) = Array(rest).splitOnce(at: 10)
        providers.answer = Array(answer)
        let body: [String: Any] = [
            "requestUri": String(decoding: uri, as: UTF8.self), "postBody": String(decoding: postBody, as: UTF8.self),
            "returnSecureToken": true, "returnIdpCredential": true,
        ]
        guard let json = try? JSONSerialization.data(withJSONObject: body) else { return }
        let response = service.handle(HTTPRequest(
            method: .post, path: "/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp", queryItems: [("key", "fuzz")],
            headers: ["content-type": "application/json"], body: Array(json)))
        fuzzCheck((200...599).contains(response.status), "status \(response.status)")
        guard response.status == 200, let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any],
            let provider = object["providerId"] as? String
        else { return }
        // By ID token (the answer carries it as oauthIdToken); Google's access tokens are vouched for by
        // Google's own APIs, which the fuzzer plays too, so those may sign in.
        let signedIn = object["idToken"] != nil && object["oauthIdToken"] != nil
        fuzzCheck(!signedProviders.contains(provider) || !signedIn, "a made-up \(provider) ID token signed in")
    }
}

/// The admin's side of identity providers: provider configuration bodies and update masks through the
/// v2 admin API, and the `--provider-endpoints` file. Properties: every answer is a status in 200–599,
/// and whatever a configuration call accepts reads back as an object naming itself.
///
/// Input: `create` or `patch <updateMask>`, a newline, then a JSON body (also read as an endpoints file).
enum IdentityProviderConfigFuzzing {
    static let target = FuzzTarget(
        name: "idp-config", input: "'create' or 'patch MASK', a newline, then a configuration body", run: run)

    static let service: AuthService? = {
        let directory = NSTemporaryDirectory() + "hearth-fuzz-idp-config-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try? AuthService.open(dataDirectory: directory, configuration: AuthConfiguration(projectID: "demo-fuzz", emulator: true, adminToken: nil))
    }()

    static let collections = [
        ("oauthIdpConfigs", "oauthIdpConfigId", "oidc.fuzz"), ("inboundSamlConfigs", "inboundSamlConfigId", "saml.fuzz"),
        ("defaultSupportedIdpConfigs", "idpId", "google.com"),
    ]

    static func run(_ bytes: [UInt8]) {
        _ = try? ProviderEndpoints(overridingWith: bytes)
        guard let service else { return }
        let (command, body) = bytes.splitOnce(at: 10)
        let words = String(decoding: command, as: UTF8.self).split(separator: " ", maxSplits: 1).map(String.init)
        let headers = ["authorization": "Bearer owner", "content-type": "application/json"]
        let base = "/identitytoolkit.googleapis.com/v2/projects/demo-fuzz/"
        for (collection, parameter, id) in collections {
            let request: HTTPRequest
            if words.first == "patch" {
                request = HTTPRequest(
                    method: .patch, path: base + collection + "/" + id, queryItems: [("updateMask", words.count > 1 ? words[1] : "")],
                    headers: headers, body: Array(body))
            } else {
                request = HTTPRequest(method: .post, path: base + collection, queryItems: [(parameter, id)], headers: headers, body: Array(body))
            }
            let response = service.handle(request)
            fuzzCheck((200...599).contains(response.status), "status \(response.status) for \(collection)")
            if response.status == 200 {
                let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
                fuzzCheck((object?["name"] as? String)?.hasSuffix("/" + id) == true, "an accepted \(collection) does not name itself")
            }
        }
    }
}
