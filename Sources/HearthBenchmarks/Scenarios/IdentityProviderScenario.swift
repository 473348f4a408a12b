import Dispatch
import Foundation
import HearthAuth
import HearthAuthSQLite
import HearthCrypto
import HearthOutbound
import HearthProtocol

/// Google's key set, served from memory: the benchmark measures Hearth, not a network.
private final class InMemoryKeys: HTTPFetching, @unchecked Sendable {  // `body` is set once, before any fetch
    var body: [UInt8] = []
    func fetch(_ request: OutboundRequest) throws(OutboundError) -> OutboundResponse {
        OutboundResponse(status: 200, headers: ["cache-control": "public, max-age=3600"], body: body)
    }
}

extension Scenario {
    /// Provider sign-in on all cores: Google ID tokens (RS256, 2048-bit) of 1,000 users checked as
    /// signInWithIdp checks them (split, decode, the key by `kid` from the cached key set, signature,
    /// iss/aud/exp/iat), against bare RS256 verification of the same tokens on the same threads; the full
    /// sign-in (account lookup and update, a new session: Hearth's own RS256 ID token, a refresh token)
    /// as an extra, with the key cache's hit rate.
    static let authIdp = Scenario(
        name: "auth.idp",
        summary: "Google ID-token checks of signInWithIdp on all cores, vs bare RS256 verification; full sign-ins and key-cache hits as extras"
    ) { context in
        let threads = AuthWorkload.threads, perThread = 2_000, total = threads * perThread
        let google = try RSAPrivateKey.generate(bits: 2048)
        let keys = InMemoryKeys()
        let jwk: [String: Any] = [
            "kty": "RSA", "kid": "bench", "alg": "RS256", "use": "sig", "n": Base64URL.encode(google.publicKey.modulus),
            "e": Base64URL.encode(google.publicKey.exponent),
        ]
        keys.body = Array(try JSONSerialization.data(withJSONObject: ["keys": [jwk]]))
        var configuration = AuthConfiguration(projectID: "bench", emulator: false, adminToken: "bench-admin")
        configuration.fetcher = keys
        configuration.attemptsPerIP = .init(capacity: 1e9, perSecond: 1e9)
        let service = try AuthService.open(dataDirectory: ServerHarness.temporaryDirectory("auth-idp"), configuration: configuration)
        let created = service.handle(HTTPRequest(
            method: .post, path: "/identitytoolkit.googleapis.com/v2/projects/bench/defaultSupportedIdpConfigs", queryItems: [("idpId", "google.com")],
            headers: ["authorization": "Bearer bench-admin", "content-type": "application/json"],
            body: Array(#"{"enabled":true,"clientId":"bench-client"}"#.utf8)))
        precondition(created.status == 200, created.bodyText)

        let now = Int(Date().timeIntervalSince1970)
        let header = Base64URL.encode(Array(#"{"alg":"RS256","kid":"bench","typ":"JWT"}"#.utf8))
        let tokens: [String] = try (0..<1_000).map { user in
            let claims = #"{"iss":"https://accounts.google.com","aud":"bench-client","sub":"user-\#(user)","email":"user\#(user)@example.com","email_verified":true,"iat":\#(now),"exp":\#(now + 3600)}"#
            let input = header + "." + Base64URL.encode(Array(claims.utf8))
            return input + "." + Base64URL.encode(try google.signRS256(Array(input.utf8)))
        }
        let tokenList = Slots(tokens)
        let hearth = context.measure("signInWithIdp's token check ×\(total)") {
            AuthWorkload.parallel(threads: threads, perThread: perThread) { thread, index in
                let token = tokenList.values[(thread * perThread + index) % tokenList.values.count]
                blackHole(try? service.verifyProviderToken(token, providerID: "google.com"))
            }
        }
        let publicKey = try RSAPublicKey(modulus: google.publicKey.modulus, exponent: google.publicKey.exponent)
        let signed: [(message: [UInt8], signature: [UInt8])] = tokens.map { token in
            let parts = token.split(separator: ".")
            return (Array("\(parts[0]).\(parts[1])".utf8), Base64URL.decode(parts[2])!)
        }
        let signedList = Slots(signed)
        let reference = context.measure("RS256 verify alone ×\(total)") {
            AuthWorkload.parallel(threads: threads, perThread: perThread) { thread, index in
                let item = signedList.values[(thread * perThread + index) % signedList.values.count]
                blackHole(publicKey.verifyRS256(item.message, signature: item.signature))
            }
        }
        // Full sign-ins of the same users (the first round makes the accounts).
        let signIns = threads * 100
        @Sendable func signIn(_ token: String) -> HTTPResponse {
            service.handle(HTTPRequest(
                method: .post, path: "/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp", queryItems: [("key", "bench")],
                headers: ["content-type": "application/json"],
                body: Array(#"{"requestUri":"http://localhost","postBody":"providerId=google.com&id_token=\#(token)","returnSecureToken":true}"#.utf8)))
        }
        let full = context.measure("signInWithIdp, whole ×\(signIns)", prepare: {
            for token in tokens.prefix(signIns) { precondition(signIn(token).status == 200) }
        }) {
            AuthWorkload.parallel(threads: threads, perThread: 100) { thread, index in
                blackHole(AuthWorkload.field(signIn(tokenList.values[thread * 100 + index]), "idToken"))
            }
        }
        // A sign-in's unavoidable crypto: the provider token's verification and Hearth's own ID token's
        // RS256 signature, on the same threads: the floor the whole sign-in is compared with.
        let hearthKey = try RSAPrivateKey.generate(bits: 2048)
        let floor = context.measure("RS256 verify + sign ×\(signIns)") {
            AuthWorkload.parallel(threads: threads, perThread: 100) { thread, index in
                let item = signedList.values[(thread * 100 + index) % signedList.values.count]
                blackHole(publicKey.verifyRS256(item.message, signature: item.signature))
                blackHole(try? hearthKey.signRS256(item.message))
            }
        }
        let (lookups, fetches) = service.providerKeyLookups
        let hitRate = lookups == 0 ? 0 : Double(lookups - fetches) / Double(lookups)
        print("   key set: \(lookups) lookups, \(fetches) fetched: hit rate \(rounded(hitRate * 100, places: 3)) %")
        return BenchmarkResult(
            scenario: "auth.idp", metric: "provider ID-token checks on \(threads) threads", value: Double(total) / hearth.median.seconds,
            unit: "checks/s", reference: "bare RS256 verify of the same tokens (OpenSSL, 2048-bit)",
            referenceValue: Double(total) / reference.median.seconds,
            extras: [
                ("signInsPerSecond", Double(signIns) / full.median.seconds),
                ("cryptoFloorPerSecond", Double(signIns) / floor.median.seconds),
                ("signInsVsCryptoFloor", floor.median.seconds / full.median.seconds), ("keyCacheHitRate", hitRate),
            ])
    }
}
