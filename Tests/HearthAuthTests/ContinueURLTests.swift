import HearthProtocol
import Foundation
import HearthAuth
import Testing

/// Security review finding 1: action links may only lead to authorized domains, and the email sign-in
/// redirect only follows live EMAIL_SIGNIN codes.
private func location(_ response: HTTPResponse) -> String? { response.headers.first { $0.0 == "location" }?.1 }

private func action(_ harness: Harness, _ items: [(String, String)]) -> HTTPResponse {
    harness.service.handle(HTTPRequest(method: .get, path: "/emulator/action", queryItems: items))
}

private func outbox(_ harness: Harness) -> [[String: Any]] {
    harness.get("/emulator/v1/projects/demo-test/oobCodes").json["oobCodes"] as? [[String: Any]] ?? []
}

@Test func continueUrlsMustBeOnAuthorizedDomains() throws {
    let harness = try Harness()
    let unauthorized = "UNAUTHORIZED_DOMAIN : Domain not allowlisted by project"
    for url in ["https://evil.example/finish", "https://localhost@evil.example/", "https://localhost.evil.example/"] {
        let send = harness.client("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "v@b.co", "continueUrl": url])
        #expect(send.status == 400 && errorMessage(send.json) == unauthorized, "\(url)")
    }
    for url in ["javascript:alert(1)", "mailto:x@evil.example", "/relative"] {
        #expect(errorMessage(harness.client("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "v@b.co", "continueUrl": url]).json)
            == "INVALID_CONTINUE_URI", "\(url)")
    }
    #expect(outbox(harness).isEmpty)
    // Every request type that takes a continueUrl, and admins too.
    let idToken = harness.client("signUp", ["email": "v@b.co", "password": "secret123"]).json["idToken"] as! String
    for body: [String: Any] in [
        ["requestType": "PASSWORD_RESET", "email": "v@b.co"], ["requestType": "VERIFY_EMAIL", "idToken": idToken],
        ["requestType": "VERIFY_AND_CHANGE_EMAIL", "idToken": idToken, "newEmail": "w@b.co"],
    ] {
        let evil = body.merging(["continueUrl": "https://evil.example/"]) { $1 }
        #expect(errorMessage(harness.client("sendOobCode", evil).json) == unauthorized, "\(body)")
    }
    let adminLink = harness.post(
        "/identitytoolkit.googleapis.com/v1/accounts:sendOobCode",
        ["requestType": "EMAIL_SIGNIN", "email": "v@b.co", "continueUrl": "https://evil.example/", "returnOobLink": true], admin: true)
    #expect(errorMessage(adminLink.json) == unauthorized)
    // createAuthUri sends nothing to its continueUri: any http(s) URL will do (the iOS SDK's is google.com's).
    #expect(harness.client("createAuthUri", ["identifier": "v@b.co", "continueUri": "http://www.google.com/"]).status == 200)
    #expect(errorMessage(harness.client("createAuthUri", ["identifier": "v@b.co", "continueUri": "not a url"]).json)
        == "INVALID_CONTINUE_URI")
    #expect(harness.client("createAuthUri", ["identifier": "v@b.co", "continueUri": "http://localhost:5173/"]).status == 200)
    #expect(harness.client("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "v@b.co", "continueUrl": "http://LOCALHOST:5173/x"])
        .status == 200)
    #expect(outbox(harness).count == 1)

    // The host of publicURL is authorized; a configured list replaces the defaults.
    let deployed = try Harness { $0.publicURL = "https://auth.example.com"; $0.authorizedDomains = ["app.example.com"] }
    for (url, status) in [("https://auth.example.com/done", 200), ("https://app.example.com/done", 200), ("http://localhost/", 400)] {
        #expect(deployed.client("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "v@b.co", "continueUrl": url]).status == status,
                "\(url)")
    }
}

@Test func signInRedirectsFollowOnlyLiveEmailSignInCodesToAuthorizedHosts() throws {
    let harness = try Harness()
    harness.client("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "r@b.co", "continueUrl": "http://localhost/finish"])
    let code = try #require(outbox(harness).first?["oobCode"] as? String)
    func signIn(_ code: String, _ continueUrl: String) -> HTTPResponse {
        action(harness, [("mode", "signIn"), ("oobCode", code), ("apiKey", "k"), ("continueUrl", continueUrl)])
    }
    // An edited link keeps leading where the code was sent for; an unknown code or one of another type: no redirect.
    let evil = signIn(code, "https://evil.example/steal")
    #expect(location(evil)?.hasPrefix("http://localhost/finish?") == true)
    let unknown = signIn("made-up-code", "http://localhost/finish")
    #expect(unknown.status == 400 && location(unknown) == nil)
    let idToken = harness.client("signUp", ["email": "s@b.co", "password": "secret123"]).json["idToken"] as! String
    harness.client("sendOobCode", ["requestType": "VERIFY_EMAIL", "idToken": idToken])
    let verifyCode = try #require(outbox(harness).first { $0["requestType"] as? String == "VERIFY_EMAIL" }?["oobCode"] as? String)
    #expect(signIn(verifyCode, "http://localhost/finish").status == 400)
    // The HTML page behaves the same way.
    let page = harness.service.handle(HTTPRequest(
        method: .get, path: "/emulator/action",
        queryItems: [("mode", "signIn"), ("oobCode", code), ("apiKey", "k"), ("continueUrl", "https://evil.example/")],
        headers: ["accept": "text/html"]))
    #expect(location(page)?.hasPrefix("http://localhost/finish?") == true)
    let unknownPage = harness.service.handle(HTTPRequest(
        method: .get, path: "/emulator/action",
        queryItems: [("mode", "signIn"), ("oobCode", "made-up"), ("apiKey", "k"), ("continueUrl", "http://localhost/finish")],
        headers: ["accept": "text/html"]))
    #expect(unknownPage.status == 400 && location(unknownPage) == nil)
    // The real link redirects.
    let good = signIn(code, "http://localhost/finish")
    #expect(good.status == 303 && location(good)?.hasPrefix("http://localhost/finish?mode=signIn&oobCode=\(code)") == true)

    // After verifying an email, an unauthorized continueUrl gets the JSON answer, not a redirect.
    let verified = action(harness, [("mode", "verifyEmail"), ("oobCode", verifyCode), ("apiKey", "k"), ("continueUrl", "https://evil.example/")])
    #expect(verified.status == 200 && location(verified) == nil)
}

/// Security review finding 6: the outbox link of an email sign-in code carries its continueUrl, so opening
/// it redirects to the app instead of answering 400.
@Test func outboxSignInLinksCarryTheirContinueUrl() throws {
    let harness = try Harness()
    harness.client("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "o@b.co", "continueUrl": "http://localhost:3000/finish?x=1"])
    let entry = try #require(outbox(harness).first)
    let code = try #require(entry["oobCode"] as? String)
    let link = try #require(URLComponents(string: entry["oobLink"] as? String ?? ""))
    let items = (link.queryItems ?? []).map { ($0.name, $0.value ?? "") }
    #expect(items.contains { $0 == ("continueUrl", "http://localhost:3000/finish?x=1") })
    let opened = action(harness, items)
    #expect(opened.status == 303)
    #expect(location(opened) == "http://localhost:3000/finish?x=1&mode=signIn&oobCode=\(code)&apiKey=fake-api-key&lang=en")
    // The link without its continueUrl still leads back to the stored one.
    let trimmed = action(harness, items.filter { $0.0 != "continueUrl" })
    #expect(location(trimmed)?.hasPrefix("http://localhost:3000/finish?x=1&") == true)
}
