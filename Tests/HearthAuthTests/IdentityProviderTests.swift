import Foundation
import HearthAuth
import HearthCrypto
import HearthOutbound
import HearthProtocol
import Testing

/// Sign-in with identity providers (accounts:signInWithIdp) against providers in the test process
/// (``FakeProviders``: real keys, real signatures), and the admin API that configures them.
@Suite struct IdentityProviderTests {
    let providers = FakeProviders()
    let harness: Harness

    init() throws {
        let providers = self.providers
        harness = try Harness(emulator: false, adminToken: "owner") { configuration in
            configuration.fetcher = providers
            var endpoints = ProviderEndpoints()
            endpoints.googleKeys = FakeProviders.googleKeys
            endpoints.appleKeys = FakeProviders.appleKeys
            endpoints.githubAPI = FakeProviders.github
            endpoints.facebookGraph = FakeProviders.facebook
            configuration.providerEndpoints = endpoints
        }
    }

    static let configs = "/identitytoolkit.googleapis.com/v2/projects/demo-test/"

    @discardableResult
    func configure(_ collection: String, _ id: String, _ body: [String: Any]) -> (status: Int, json: [String: Any]) {
        let parameter = ["oauthIdpConfigs": "oauthIdpConfigId", "inboundSamlConfigs": "inboundSamlConfigId"][collection] ?? "idpId"
        return admin(.post, collection, query: [(parameter, id)], body)
    }

    /// An admin call on the provider configurations.
    func admin(_ method: HTTPRequest.Method, _ path: String, query: [(String, String)] = [], _ body: [String: Any]? = nil)
        -> (status: Int, json: [String: Any])
    {
        harness.decode(harness.service.handle(HTTPRequest(
            method: method, path: Self.configs + path, queryItems: query,
            headers: ["authorization": "Bearer owner", "content-type": "application/json"],
            body: body.map { Array(try! JSONSerialization.data(withJSONObject: $0)) } ?? [])))
    }

    func enableBuiltIns() {
        #expect(configure("defaultSupportedIdpConfigs", "google.com", ["enabled": true, "clientId": "web-client"]).status == 200)
        #expect(configure("defaultSupportedIdpConfigs", "apple.com", ["enabled": true, "clientId": "com.example.service"]).status == 200)
        #expect(configure("defaultSupportedIdpConfigs", "github.com", ["enabled": true, "clientId": "gh-app", "clientSecret": "gh-secret"]).status == 200)
        #expect(configure("defaultSupportedIdpConfigs", "facebook.com", ["enabled": true, "clientId": "fb-app", "clientSecret": "fb-secret"]).status == 200)
    }

    var now: Int64 { harness.clock.now / 1000 }

    func googleClaims(_ sub: String, email: String? = nil, verified: Bool = true) -> [String: Any] {
        var claims: [String: Any] = [
            "iss": "https://accounts.google.com", "aud": "web-client", "sub": sub, "iat": now, "exp": now + 3600, "name": "Grace",
            "picture": "https://example.com/g.png",
        ]
        if let email {
            claims["email"] = email
            claims["email_verified"] = verified
        }
        return claims
    }

    func signIn(_ postBody: String, idToken: String? = nil, returnIdpCredential: Bool = false, extra: [String: Any] = [:])
        -> (status: Int, json: [String: Any])
    {
        var body: [String: Any] = ["requestUri": "http://localhost", "postBody": postBody, "returnSecureToken": true]
        if let idToken { body["idToken"] = idToken }
        if returnIdpCredential { body["returnIdpCredential"] = true }
        for (name, value) in extra { body[name] = value }
        return harness.client("signInWithIdp", body)
    }

    func google(_ token: String, extra: String = "") -> (status: Int, json: [String: Any]) {
        signIn("id_token=\(token)&providerId=google.com" + extra)
    }

    // MARK: Configuration

    @Test func oidcAndSAMLConfigurationsAreCreatedReadChangedListedAndDeletedInFirebasesShapes() {
        let created = configure(
            "oauthIdpConfigs", "oidc.partner",
            ["clientId": "CLIENT", "issuer": "https://oidc.example.com/issuer", "displayName": "Partner", "enabled": true, "responseType": ["idToken": true]])
        #expect(created.status == 200)
        #expect(created.json["name"] as? String == "projects/demo-test/oauthIdpConfigs/oidc.partner")
        #expect(created.json["clientSecret"] == nil)
        #expect((created.json["responseType"] as? [String: Any])?["idToken"] as? Bool == true)
        #expect(configure("oauthIdpConfigs", "oidc.partner", ["clientId": "C", "issuer": "https://x.example"]).json.errorCode == "CONFIGURATION_EXISTS")
        #expect(configure("oauthIdpConfigs", "partner", ["clientId": "C", "issuer": "https://x.example"]).json.errorCode == "INVALID_CONFIG_ID")
        #expect(configure("oauthIdpConfigs", "oidc.plain", ["clientId": "C", "issuer": "http://x.example"]).json.errorCode == "INVALID_CONFIG")

        // PATCH changes only what the mask names; a masked field without a value is cleared.
        let patched = harness.service.handle(HTTPRequest(
            method: .patch, path: Self.configs + "oauthIdpConfigs/oidc.partner",
            queryItems: [("updateMask", "displayName,responseType.code,responseType.idToken,clientSecret")],
            headers: ["authorization": "Bearer owner", "content-type": "application/json"],
            body: Array(#"{"responseType":{"code":true,"idToken":false},"clientSecret":"s3cret"}"#.utf8)))
        let changed = harness.decode(patched).json
        #expect(changed["displayName"] == nil)
        #expect(changed["clientSecret"] as? String == "s3cret")
        #expect(changed["issuer"] as? String == "https://oidc.example.com/issuer")
        #expect((changed["responseType"] as? [String: Any])?["code"] as? Bool == true)

        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        let saml = configure(
            "inboundSamlConfigs", "saml.corp",
            [
                "idpConfig": ["idpEntityId": "IDP", "ssoUrl": "https://idp.example.com/login", "idpCertificates": [["x509Certificate": pem]]],
                "spConfig": ["spEntityId": "RP", "callbackUri": "https://demo.firebaseapp.com/__/auth/handler"], "enabled": true,
            ])
        #expect(saml.status == 200)
        let certificates = (saml.json["idpConfig"] as? [String: Any])?["idpCertificates"] as? [[String: Any]]
        #expect(certificates?.first?["x509Certificate"] as? String == pem)

        for index in 0..<3 { configure("oauthIdpConfigs", "oidc.more\(index)", ["clientId": "C", "issuer": "https://x.example"]) }
        let first = admin(.get, "oauthIdpConfigs", query: [("pageSize", "2")]).json
        #expect((first["oauthIdpConfigs"] as? [Any])?.count == 2)
        let token = try? #require(first["nextPageToken"] as? String)
        let second = admin(.get, "oauthIdpConfigs", query: [("pageSize", "2"), ("pageToken", token ?? "")]).json
        #expect((second["oauthIdpConfigs"] as? [Any])?.count == 2)
        #expect(second["nextPageToken"] == nil)

        let deleted = harness.decode(harness.service.handle(HTTPRequest(
            method: .delete, path: Self.configs + "oauthIdpConfigs/oidc.partner", headers: ["authorization": "Bearer owner"])))
        #expect(deleted.status == 200 && deleted.json.isEmpty)
        let gone = harness.get(Self.configs + "oauthIdpConfigs/oidc.partner", admin: true)
        #expect(gone.status == 404)
        #expect(gone.json.errorCode == "CONFIGURATION_NOT_FOUND")
        #expect(harness.get(Self.configs + "oauthIdpConfigs", admin: false).status == 401)
        #expect(configure("defaultSupportedIdpConfigs", "myspace.com", ["enabled": true, "clientId": "x"]).json.errorCode == "INVALID_PROVIDER_ID")
    }

    // MARK: Google, Apple, OpenID

    @Test func aGoogleIDTokenSignsUpThenSignsInTheSameAccount() throws {
        enableBuiltIns()
        let first = google(providers.token(googleClaims("g-1", email: "Grace@Example.com")))
        #expect(first.status == 200, "\(first.json)")
        #expect(first.json["isNewUser"] as? Bool == true)
        #expect(first.json["federatedId"] as? String == "https://accounts.google.com/g-1")
        #expect(first.json["email"] as? String == "grace@example.com")
        #expect(first.json["emailVerified"] as? Bool == true)
        let idToken = try #require(first.json["idToken"] as? String)
        let context = try harness.service.verifier.verify(idToken)
        #expect(context.provider == "google.com")
        #expect(context.claims.child("firebase").child("identities").child("google.com").child("0").stringValue == "g-1")

        let again = google(providers.token(googleClaims("g-1", email: "grace@example.com")))
        #expect(again.json["localId"] as? String == first.json["localId"] as? String)
        #expect(again.json["isNewUser"] == nil)
        let looked = harness.client("lookup", ["idToken": idToken]).json
        let info = ((looked["users"] as? [[String: Any]])?.first?["providerUserInfo"] as? [[String: Any]]) ?? []
        #expect(info.contains { $0["providerId"] as? String == "google.com" && $0["rawId"] as? String == "g-1" })
        // The keys were fetched once for both sign-ins.
        #expect(providers.requests.withLock { $0.filter { $0 == FakeProviders.googleKeys }.count } == 1)
    }

    @Test func hostileTokensAreRefusedWithFirebasesErrorsAndCreateNothing() {
        enableBuiltIns()
        let claims = googleClaims("g-hostile", email: "h@example.com")
        var cases: [(String, String)] = []
        var wrongAudience = claims
        wrongAudience["aud"] = "someone-elses-client"
        cases.append((providers.token(wrongAudience), "INVALID_IDP_RESPONSE"))
        var wrongIssuer = claims
        wrongIssuer["iss"] = "https://evil.example"
        cases.append((providers.token(wrongIssuer), "INVALID_IDP_RESPONSE"))
        var expired = claims
        expired["exp"] = now - 3600
        cases.append((providers.token(expired), "INVALID_IDP_RESPONSE"))
        var future = claims
        future["iat"] = now + 3600
        cases.append((providers.token(future), "INVALID_IDP_RESPONSE"))
        let unsigned = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(try! JSONSerialization.data(withJSONObject: claims))) + "."
        cases.append((unsigned, "INVALID_IDP_RESPONSE"))
        // HS256 "signed" with the provider's public key as the secret: no RSA key verifies HMAC.
        cases.append((providers.token(claims, header: ["alg": "HS256"]), "INVALID_IDP_RESPONSE"))
        cases.append((providers.token(claims, header: ["jku": "https://evil.example/keys"]), "INVALID_IDP_RESPONSE"))
        cases.append((providers.token(claims, header: ["kid": "made-up"]), "INVALID_IDP_RESPONSE"))
        // An RSA-signed token claiming ES256 meets the P-256 key by kid and fails.
        cases.append((providers.token(claims, header: ["alg": "ES256", "kid": "ec-1"]), "INVALID_IDP_RESPONSE"))
        var tampered = providers.token(claims).split(separator: ".").map(String.init)
        tampered[1] = Base64URL.encode(Array(#"{"sub":"admin"}"#.utf8))
        cases.append((tampered.joined(separator: "."), "INVALID_IDP_RESPONSE"))
        cases.append(("not.a.jwt", "INVALID_IDP_RESPONSE"))
        cases.append((String(repeating: "a", count: 20_000), "INVALID_IDP_RESPONSE"))
        for (token, code) in cases {
            let answer = google(token)
            #expect(answer.status == 400 && answer.json.errorCode == code, "\(answer.json)")
        }
        let listed = harness.post("/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts:query", [:], admin: true, key: false).json
        #expect((listed["userInfo"] as? [Any] ?? []).isEmpty, "\(listed)")
        // Two tokens with unknown kids in a row fetched the keys again once, not twice.
        #expect(providers.requests.withLock { $0.filter { $0 == FakeProviders.googleKeys }.count } <= 2)
    }

    @Test func rotatedKeysAreFetchedAgainAndADownProviderFailsFastUntilItsBackoffEnds() {
        enableBuiltIns()
        #expect(google(providers.token(googleClaims("g-r1"))).status == 200)
        providers.rsaKeyID.withLock { $0 = "rsa-2" }
        // Within the refetch interval, a new kid is refused without asking again.
        #expect(google(providers.token(googleClaims("g-r2"))).json.errorCode == "INVALID_IDP_RESPONSE")
        harness.clock.advance(seconds: Int64(ServerLimits.providerKeysRefetchIntervalSeconds) + 1)
        #expect(google(providers.token(googleClaims("g-r3"))).status == 200)

        providers.down.withLock { _ = $0.insert(FakeProviders.appleKeys) }
        let appleClaims: [String: Any] = ["iss": "https://appleid.apple.com", "aud": "com.example.service", "sub": "a-1", "exp": now + 600]
        let failed = signIn("id_token=\(providers.token(appleClaims))&providerId=apple.com")
        #expect(failed.json.errorMessage?.contains("could not be read") == true, "\(failed.json)")
        let asked = providers.requestCount
        _ = signIn("id_token=\(providers.token(appleClaims))&providerId=apple.com")
        #expect(providers.requestCount == asked)  // failed at once, within the backoff
        providers.down.withLock { $0.removeAll() }
        harness.clock.advance(seconds: Int64(ServerLimits.providerFetchFailureBackoffSeconds) + 1)
        #expect(signIn("id_token=\(providers.token(appleClaims))&providerId=apple.com").status == 200)
    }

    @Test func appleChecksTheHashedNonceOnceAndTakesTheNameFromTheApp() {
        enableBuiltIns()
        let raw = "raw-nonce-123"
        let hashed = SHA256.hash(raw).map { String(format: "%02x", $0) }.joined()
        let claims: [String: Any] = [
            "iss": "https://appleid.apple.com", "aud": "com.example.service", "sub": "apple-1", "exp": now + 600, "iat": now,
            "nonce": hashed, "email": "a1@privaterelay.appleid.com", "email_verified": "true",
        ]
        let token = providers.token(claims, es256: true)
        #expect(signIn("id_token=\(token)&providerId=apple.com").json.errorCode == "MISSING_OR_INVALID_NONCE")
        #expect(signIn("id_token=\(token)&providerId=apple.com&nonce=other").json.errorCode == "MISSING_OR_INVALID_NONCE")
        let user = #"{"name":{"firstName":"Ada","lastName":"Lovelace"}}"#
        let ok = signIn("id_token=\(token)&providerId=apple.com&nonce=\(raw)&user=\(user)")
        #expect(ok.status == 200, "\(ok.json)")
        #expect(ok.json["displayName"] as? String == "Ada Lovelace")
        #expect(ok.json["emailVerified"] as? Bool == true)
        let replay = signIn("id_token=\(token)&providerId=apple.com&nonce=\(raw)")
        #expect(replay.json.errorMessage?.hasPrefix("MISSING_OR_INVALID_NONCE : Duplicate credential") == true)
    }

    @Test func anOpenIDProviderIsFoundThroughItsDiscoveryDocumentAndSignsWithES256() {
        #expect(configure(
            "oauthIdpConfigs", "oidc.idp", ["clientId": "oidc-client", "issuer": FakeProviders.oidcIssuer, "enabled": true, "responseType": ["idToken": true]]
        ).status == 200)
        let claims: [String: Any] = ["iss": FakeProviders.oidcIssuer, "aud": "oidc-client", "sub": "o-1", "exp": now + 600, "email": "o@example.com"]
        let answer = signIn("id_token=\(providers.token(claims, es256: true))&providerId=oidc.idp")
        #expect(answer.status == 200, "\(answer.json)")
        #expect(answer.json["providerId"] as? String == "oidc.idp")
        #expect(answer.json["emailVerified"] as? Bool == false)
        // Switched off: refused as Firebase refuses a provider it does not have.
        _ = harness.service.handle(HTTPRequest(
            method: .patch, path: Self.configs + "oauthIdpConfigs/oidc.idp", queryItems: [("updateMask", "enabled")],
            headers: ["authorization": "Bearer owner"], body: Array(#"{"enabled":false}"#.utf8)))
        #expect(signIn("id_token=\(providers.token(claims, es256: true))&providerId=oidc.idp").json.errorCode == "OPERATION_NOT_ALLOWED")
        #expect(signIn("id_token=x&providerId=oidc.unknown").json.errorCode == "OPERATION_NOT_ALLOWED")
    }

    // MARK: Access-token providers

    @Test func gitHubAndFacebookAskTheirAPIsAndOnlyTrustTokensOfThisProjectsApp() {
        enableBuiltIns()
        providers.addGitHubUser(token: "gh-token", ["id": 4242, "login": "octo", "name": "Octo Cat", "avatar_url": "https://a/o.png", "email": "octo@example.com"])
        let github = signIn("access_token=gh-token&providerId=github.com")
        #expect(github.status == 200, "\(github.json)")
        #expect(github.json["federatedId"] as? String == "4242")
        #expect(github.json["screenName"] as? String == "octo")
        #expect(github.json["emailVerified"] as? Bool == true)
        #expect(signIn("access_token=stolen-from-another-app&providerId=github.com").json.errorCode == "INVALID_IDP_RESPONSE")

        providers.addFacebookUser(token: "fb-token", ["id": "77", "name": "Mark", "email": "octo@example.com"])
        // Facebook's address is not verified, and it is the GitHub account's: the app must confirm.
        let facebook = signIn("access_token=fb-token&providerId=facebook.com")
        #expect(facebook.json["needConfirmation"] as? Bool == true, "\(facebook.json)")
        #expect(facebook.json["localId"] as? String == github.json["localId"] as? String)
        #expect(facebook.json["verifiedProvider"] as? [String] == ["github.com"])
        #expect(facebook.json["idToken"] == nil)
        #expect(signIn("access_token=bad&providerId=facebook.com").json.errorMessage?.contains("debug_token") == true)
    }

    // MARK: Accounts

    @Test func aVerifiedProviderAddressTakesOverAnUnverifiedPasswordAccount() throws {
        enableBuiltIns()
        let squatter = harness.client("signUp", ["email": "victim@example.com", "password": "squatter1", "returnSecureToken": true])
        let uid = try #require(squatter.json["localId"] as? String)
        let google = google(providers.token(googleClaims("g-victim", email: "victim@example.com")))
        #expect(google.json["localId"] as? String == uid)
        #expect(google.json["emailVerified"] as? Bool == true)
        // The password set by whoever registered the address first no longer signs in, and its session ended.
        #expect(harness.client("signInWithPassword", ["email": "victim@example.com", "password": "squatter1"]).status == 400)
        #expect(harness.refresh(try #require(squatter.json["refreshToken"] as? String)).status == 400)
    }

    @Test func linkingUnlinkingAndTheErrorsThatCarryTheProvidersCredential() throws {
        enableBuiltIns()
        let anonymous = harness.client("signUp", ["returnSecureToken": true])
        let idToken = try #require(anonymous.json["idToken"] as? String)
        let token = providers.token(googleClaims("g-link", email: "link@example.com"))
        let linked = signIn("id_token=\(token)&providerId=google.com", idToken: idToken)
        #expect(linked.status == 200, "\(linked.json)")
        #expect(linked.json["localId"] as? String == anonymous.json["localId"] as? String)
        #expect(linked.json["email"] as? String == "link@example.com")
        let methods = harness.client("createAuthUri", ["identifier": "link@example.com", "continueUri": "http://localhost"])
        _ = methods  // email-enumeration protection hides methods from clients; the admin sees them:
        let admin = harness.post("/identitytoolkit.googleapis.com/v1/accounts:createAuthUri", ["identifier": "link@example.com", "continueUri": "http://localhost"], admin: true)
        #expect(admin.json["signinMethods"] as? [String] == ["google.com"])

        // The same Google user on another account: refused, or answered with the credential.
        let other = try #require(harness.client("signUp", ["returnSecureToken": true]).json["idToken"] as? String)
        #expect(signIn("id_token=\(token)&providerId=google.com", idToken: other).json.errorCode == "FEDERATED_USER_ID_ALREADY_LINKED")
        let carried = signIn("id_token=\(token)&providerId=google.com", idToken: other, returnIdpCredential: true)
        #expect(carried.status == 200)
        #expect(carried.json["errorMessage"] as? String == "FEDERATED_USER_ID_ALREADY_LINKED")
        #expect(carried.json["oauthIdToken"] as? String == token)
        #expect(carried.json["idToken"] == nil)

        // Unlinked, the Google user is a stranger again: a reauthentication finds no account.
        let unlinked = harness.client("update", ["idToken": try #require(linked.json["idToken"] as? String), "deleteProvider": ["google.com"]])
        #expect((unlinked.json["providerUserInfo"] as? [[String: Any]] ?? []).allSatisfy { $0["providerId"] as? String != "google.com" })
        let reauth = signIn("id_token=\(providers.token(googleClaims("g-link")))&providerId=google.com", extra: ["autoCreate": false])
        #expect(reauth.json.errorCode == "USER_NOT_FOUND")
    }

    @Test func emulatorModeTakesMadeUpTokensForAnyProviderLikeFirebasesEmulator() throws {
        let emulator = try Harness(emulator: true)
        let claims = #"{"sub":"abc123","email":"Foo@Example.com","email_verified":true,"name":"Foo"}"#
        let uri = "http://localhost/emulator/auth/handler?providerId=google.com&id_token=" + (claims.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let answer = emulator.client("signInWithIdp", ["requestUri": uri, "returnSecureToken": true, "returnIdpCredential": true])
        #expect(answer.status == 200, "\(answer.json)")
        #expect(answer.json["email"] as? String == "foo@example.com")
        #expect(answer.json["oauthAccessToken"] as? String == "FirebaseAuthEmulatorFakeAccessToken_google.com")
        let v3 = emulator.post(
            "/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyAssertion",
            ["requestUri": "http://localhost", "postBody": "id_token=\(claims)&providerId=oidc.anything", "returnSecureToken": true])
        #expect(v3.status == 200, "\(v3.json)")
        #expect(v3.json["providerId"] as? String == "oidc.anything")
        #expect(emulator.client("signInWithIdp", ["requestUri": "http://localhost", "postBody": "id_token={bad&providerId=x.com"]).json.errorCode
            == "INVALID_IDP_RESPONSE")
        #expect(emulator.client("signInWithIdp", ["requestUri": "http://localhost", "postBody": "id_token=x"]).json.errorCode
            == "INVALID_CREDENTIAL_OR_PROVIDER_ID")
    }
}

extension Dictionary where Key == String, Value == Any {
    var errorMessage: String? { (self["error"] as? [String: Any])?["message"] as? String }
    /// The code of a Firebase error message (`CODE` or `CODE : detail`).
    var errorCode: String? { errorMessage.map { String($0.split(separator: " ", maxSplits: 1).first ?? "") } }
}
