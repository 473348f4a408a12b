import Foundation
import HearthAuth
import HearthProtocol
import Testing

@Suite struct SignInMethodsTests {
    static let config = "/identitytoolkit.googleapis.com/admin/v2/projects/demo-test/config"

    func patch(_ harness: Harness, _ body: [String: Any], admin: Bool = true) -> (status: Int, json: [String: Any]) {
        var headers = ["content-type": "application/json"]
        if admin { headers["authorization"] = "Bearer owner" }
        return harness.decode(harness.service.handle(HTTPRequest(
            method: .patch, path: Self.config, headers: headers, body: Array(try! JSONSerialization.data(withJSONObject: body)))))
    }

    @Test func methodsSwitchedOffRefuseUsersButNotTheAdmin() throws {
        let directory = temporaryPath("settings")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let harness = try Harness { $0.settingsStorage = AuthSettingsDirectory(directory: directory) }
        #expect(harness.client("signUp", ["email": "a@example.com", "password": "secret123"]).status == 200)
        #expect(patch(harness, ["signIn": ["email": ["enabled": false]]], admin: false).status == 401)
        let off = patch(harness, ["signIn": ["email": ["enabled": false], "anonymous": ["enabled": false]]])
        #expect(off.status == 200)
        let signIn = (off.json["signIn"] as? [String: Any])
        #expect((signIn?["email"] as? [String: Any])?["enabled"] as? Bool == false)

        #expect(errorMessage(harness.client("signUp", ["email": "b@example.com", "password": "secret123"]).json)?
            .hasPrefix("OPERATION_NOT_ALLOWED") == true)
        #expect(errorMessage(harness.client("signInWithPassword", ["email": "a@example.com", "password": "secret123"]).json)?
            .hasPrefix("PASSWORD_LOGIN_DISABLED") == true)
        #expect(errorMessage(harness.client("signUp", [:]).json) == "ADMIN_ONLY_OPERATION")
        #expect(errorMessage(harness.client("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "a@example.com"]).json)?
            .hasPrefix("OPERATION_NOT_ALLOWED") == true)
        // The admin still creates accounts (the console's Create user).
        let created = harness.post(
            "/identitytoolkit.googleapis.com/v1/projects/demo-test/accounts", ["email": "c@example.com", "password": "secret123"], admin: true)
        #expect(created.status == 200)

        // Kept across a restart, and turned back on piece by piece.
        let reopened = try Harness { $0.settingsStorage = AuthSettingsDirectory(directory: directory) }
        #expect(reopened.client("signUp", [:]).status == 400)
        #expect(patch(reopened, ["signIn": ["email": ["enabled": true, "passwordRequired": true]]]).status == 200)
        #expect(reopened.client("signInWithPassword", ["email": "x@example.com", "password": "secret123"]).json["error"] != nil)
        #expect(errorMessage(reopened.client("sendOobCode", ["requestType": "EMAIL_SIGNIN", "email": "a@example.com"]).json)?
            .hasPrefix("OPERATION_NOT_ALLOWED") == true)
        let read = reopened.get(Self.config, admin: true)
        let email = (read.json["signIn"] as? [String: Any])?["email"] as? [String: Any]
        #expect(email?["enabled"] as? Bool == true && email?["passwordRequired"] as? Bool == true)
    }
}
