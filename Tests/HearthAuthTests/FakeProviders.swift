import Foundation
import HearthCrypto
import HearthOutbound
import Synchronization

/// Identity providers in the test process: key sets, an OpenID discovery document, GitHub's and
/// Facebook's user APIs, answering the service's requests (``HTTPFetching``) without a network. Keys
/// are real (RS256 and ES256), so signatures are really checked; requests are counted, and a URL can be
/// made to fail.
final class FakeProviders: HTTPFetching, Sendable {
    static let googleKeys = "https://keys.test/google"
    static let appleKeys = "https://keys.test/apple"
    static let oidcIssuer = "https://idp.test"
    static let oidcKeys = "https://idp.test/keys"
    static let github = "https://github.test"
    static let facebook = "https://facebook.test"

    let rsa = try! RSAPrivateKey.generate(bits: 2048)
    let ec = try! ECPrivateKey.generate()
    /// Requests made, by URL without its query.
    let requests = Mutex<[String]>([])
    /// URLs (without query) that fail as if the provider were down.
    let down = Mutex<Set<String>>([])
    /// The key ids published; change them to rotate.
    let rsaKeyID = Mutex("rsa-1")
    let ecKeyID = Mutex("ec-1")
    /// GitHub and Facebook access tokens that are valid, and the user each belongs to.
    /// Kept as JSON text (a Mutex holds Sendable values only).
    private let gitHubUsersJSON = Mutex<[String: String]>([:])
    private let facebookUsersJSON = Mutex<[String: String]>([:])

    func addGitHubUser(token: String, _ user: [String: Any]) {
        let text = String(decoding: try! JSONSerialization.data(withJSONObject: user), as: UTF8.self)
        gitHubUsersJSON.withLock { $0[token] = text }
    }

    func addFacebookUser(token: String, _ user: [String: Any]) {
        let text = String(decoding: try! JSONSerialization.data(withJSONObject: user), as: UTF8.self)
        facebookUsersJSON.withLock { $0[token] = text }
    }

    private func gitHubUser(_ token: String?) -> [String: Any]? {
        guard let token, let text = gitHubUsersJSON.withLock({ $0[token] }) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    private func facebookUser(_ token: String?) -> [String: Any]? {
        guard let token, let text = facebookUsersJSON.withLock({ $0[token] }) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    func jwks() -> [UInt8] {
        let (x, y) = ec.coordinates
        let rsaKey = rsa.publicKey
        let keys: [[String: Any]] = [
            ["kty": "RSA", "kid": rsaKeyID.withLock { $0 }, "use": "sig", "alg": "RS256", "n": Base64URL.encode(rsaKey.modulus), "e": Base64URL.encode(rsaKey.exponent)],
            ["kty": "EC", "kid": ecKeyID.withLock { $0 }, "crv": "P-256", "x": Base64URL.encode(x), "y": Base64URL.encode(y)],
            ["kty": "oct", "kid": "symmetric", "k": "c2VjcmV0"],  // not a signing key the server may use
        ]
        return Array(try! JSONSerialization.data(withJSONObject: ["keys": keys]))
    }

    func fetch(_ request: OutboundRequest) throws(OutboundError) -> OutboundResponse {
        let base = String(request.url.split(separator: "?", maxSplits: 1)[0])
        requests.withLock { $0.append(base) }
        if down.withLock({ $0.contains(base) }) { throw .timedOut(url: request.url, seconds: 5) }
        let query = Dictionary(
            (URLComponents(string: request.url)?.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let bearer = request.headers.first { $0.name == "Authorization" }?.value.replacingOccurrences(of: "Bearer ", with: "")
        switch base {
        case Self.googleKeys, Self.appleKeys, Self.oidcKeys:
            return OutboundResponse(status: 200, headers: ["cache-control": "public, max-age=3600"], body: jwks())
        case Self.oidcIssuer + "/.well-known/openid-configuration":
            return json(["issuer": Self.oidcIssuer, "jwks_uri": Self.oidcKeys])
        case Self.github + "/user":
            guard let user = gitHubUser(bearer) else { return json(["message": "Bad credentials"], status: 401) }
            return json(user)
        case Self.github + "/user/emails":
            guard let user = gitHubUser(bearer), let email = user["email"] as? String else {
                return json(["message": "Not Found"], status: 404)
            }
            return OutboundResponse(
                status: 200, body: Array(try! JSONSerialization.data(withJSONObject: [["email": email, "primary": true, "verified": true]])))
        case Self.facebook + "/debug_token":
            let valid = facebookUser(query["input_token"]) != nil
            return json(["data": ["is_valid": valid, "app_id": "fb-app"]])
        case Self.facebook + "/me":
            guard let user = facebookUser(query["access_token"]) else { return json([:], status: 400) }
            return json(user)
        default:
            if base.hasPrefix(Self.github + "/applications/") {
                let token = (try? JSONSerialization.jsonObject(with: Data(request.body ?? []))) as? [String: Any]
                let known = gitHubUser(token?["access_token"] as? String) != nil
                return json([:], status: known ? 200 : 404)
            }
            return json(["error": "not found"], status: 404)
        }
    }

    private func json(_ object: Any, status: Int = 200) -> OutboundResponse {
        OutboundResponse(status: status, body: Array(try! JSONSerialization.data(withJSONObject: object)))
    }

    var requestCount: Int { requests.withLock { $0.count } }

    /// A signed ID token: RS256 with the RSA key unless `es256`; `header` overrides header fields.
    func token(_ claims: [String: Any], es256: Bool = false, header: [String: Any] = [:]) -> String {
        var fields: [String: Any] = ["alg": es256 ? "ES256" : "RS256", "kid": es256 ? ecKeyID.withLock { $0 } : rsaKeyID.withLock { $0 }, "typ": "JWT"]
        for (name, value) in header { fields[name] = value }
        let input = Base64URL.encode(Array(try! JSONSerialization.data(withJSONObject: fields))) + "."
            + Base64URL.encode(Array(try! JSONSerialization.data(withJSONObject: claims)))
        let signature = es256 ? try! ec.signES256(Array(input.utf8)) : try! rsa.signRS256(Array(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }
}
