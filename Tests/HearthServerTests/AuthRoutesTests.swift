import Foundation
import HearthAuth
import HearthAuthSQLite
import Testing

@testable import HearthServer

/// Auth paths reach the AuthService (off the loop, answered through the executor); others stay the database's.
@Test func authPathsAreRoutedToTheAuthService() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-auth-routes-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var configuration = AuthConfiguration(projectID: "demo-test", emulator: true, adminToken: nil)
    configuration.passwordHasher = .testing
    let auth = try AuthService.open(dataDirectory: directory, configuration: configuration)
    let server = makeServer(identity: auth)

    let signUp = try await send(
        server, .post, "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
        body: #"{"email":"ann@example.com","password":"secret123","returnSecureToken":true}"#,
        headers: ["content-type": "application/json", "origin": "http://app.test"])
    #expect(signUp.status == 200)
    #expect(signUp.header("access-control-allow-origin") == "http://app.test")
    let json = try #require(try JSONSerialization.jsonObject(with: Data(signUp.body)) as? [String: Any])
    let idToken = try #require(json["idToken"] as? String)
    #expect(try auth.verifier.verify(idToken).claims.child("email").stringValue == "ann@example.com")

    let preflight = try await send(
        server, .options, "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k", headers: ["origin": "http://app.test"])
    #expect(preflight.status == 204)
    #expect(preflight.header("access-control-allow-headers")?.contains("x-client-version") == true)

    let unknown = try await send(server, .post, "/identitytoolkit.googleapis.com/v1/accounts:nothing?key=k", body: "{}")
    #expect(unknown.status == 501)
    let database = try await send(server, .put, "/a.json", body: "1")
    #expect(database.status == 200 && database.bodyText == "1")
}
