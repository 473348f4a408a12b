import Foundation
import HearthAuth
import HearthCrypto
import Testing

/// Security review finding 2: numbers from tokens and request bodies never reach a trapping conversion.
private func unsignedToken(_ payload: String) -> String {
    Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "."
}

private func claims(sub: String = "alice", _ extra: String) -> String {
    #"{"iss":"https://securetoken.google.com/demo-test","aud":"demo-test","sub":"\#(sub)",\#(extra)}"#
}

@Test func outOfRangeOrFractionalTimeClaimsAreMalformed() throws {
    let harness = try Harness(emulator: true)
    for extra in [
        #""iat":0,"exp":1e300"#, #""iat":-1e300,"exp":3600"#, #""iat":0,"exp":9.3e18"#, #""iat":1.5,"exp":3600"#,
        #""iat":0,"exp":"soon""#, #""iat":0,"exp":3600,"auth_time":1e300"#, #""iat":0,"exp":9223372036854775807"#,
        // Int64.min: its magnitude is no Int64 (abs() of it used to trap and end the server).
        #""iat":0,"exp":-9223372036854775808"#, #""iat":-9223372036854775808,"exp":3600"#,
    ] {
        #expect(throws: TokenVerificationError(reason: .malformed), "\(extra)") {
            try harness.service.verifier.verify(unsignedToken(claims(extra)))
        }
    }
    let fine = try harness.service.verifier.verify(unsignedToken(claims(#""iat":0,"exp":4102444800,"auth_time":12"#)))
    #expect(fine.expiresAt == 4_102_444_800 && fine.authTime == 12)
    #expect(try harness.service.verifier.verify(unsignedToken(claims(#""iat":0"#))).authTime == nil)
}

@Test func hugeAuthTimeInAnUpdateIsRefusedNotACrash() throws {
    let harness = try Harness(emulator: true)
    let uid = try #require(harness.client("signUp", ["email": "t@b.co", "password": "secret123"]).json["localId"] as? String)
    let token = unsignedToken(claims(sub: uid, #""iat":1800000000,"exp":1800003600,"auth_time":1e300"#))
    let update = harness.client("update", ["idToken": token, "displayName": "T", "returnSecureToken": true])
    #expect(update.status == 400 && errorMessage(update.json) == "INVALID_ID_TOKEN")
    // Over the realtime query string (`?auth=`) the database calls `authenticate`, which must throw too.
    #expect(throws: AuthError.self) { try harness.service.authenticate(idToken: unsignedToken(claims(sub: uid, #""exp":1e300"#))) }
}

@Test func hugeNumbersInAdminBodiesAreRefused() throws {
    let harness = try Harness(emulator: true)
    let path = "/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts:query"
    let answer = harness.post(path, ["offset": Int64.max], admin: true)  // offset + limit used to overflow
    #expect(answer.status == 400 && errorMessage(answer.json)?.hasPrefix("INVALID_ARGUMENT") == true)
    // Numbers that are no Int64 count as absent (the default applies) instead of becoming Int64.min.
    for body: [String: Any] in [["offset": 1e300], ["limit": 1e300], ["limit": 2.5]] {
        #expect(harness.post(path, body, admin: true).status == 200, "\(body)")
    }
    #expect(harness.post(path, ["offset": 0, "limit": 10], admin: true).status == 200)
}

@Test("accounts:query pages in user-id order, and DESC starts from the highest id")
func queryAccountsPagesAscendingAndDescending() throws {
    let harness = try Harness(emulator: true)
    let path = "/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts:query"
    for uid in ["u1", "u2", "u3", "u4", "u5"] {
        #expect(harness.post("/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts", ["localId": uid], admin: true).status == 200)
    }
    func page(_ body: [String: Any]) -> [String] {
        let answer = harness.post(path, body, admin: true)
        return (answer.json["userInfo"] as? [[String: Any]] ?? []).compactMap { $0["localId"] as? String }
    }
    #expect(page(["limit": 2, "offset": 1]) == ["u2", "u3"])
    #expect(page(["limit": 2, "offset": 0, "order": "DESC"]) == ["u5", "u4"])
    #expect(page(["limit": 2, "offset": 2, "order": "DESC"]) == ["u3", "u2"])
}
