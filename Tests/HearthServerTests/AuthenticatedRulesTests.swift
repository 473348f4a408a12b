import HearthTesting
import HearthProtocol
import Foundation
import HearthAuth
import HearthAuthSQLite
import Testing

@testable import HearthServer

/// A non-emulator server with the auth service, and an ID token for a new account.
private func serverWithAccount(email: String) async throws -> (DatabaseServer, idToken: String, uid: String, directory: String) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-auth-rules-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    var configuration = AuthConfiguration(projectID: "demo-test", emulator: false, adminToken: "secret")
    configuration.passwordHasher = .testing
    let auth = try AuthService.open(dataDirectory: directory, configuration: configuration)
    let server = makeServer(emulator: false, adminToken: "secret", identity: auth)
    let signUp = try await send(
        server, .post, "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
        body: #"{"email":"\#(email)","password":"secret123","returnSecureToken":true}"#,
        headers: ["content-type": "application/json"])
    try #require(signUp.status == 200, "\(signUp.bodyText)")
    let json = try #require(try JSONSerialization.jsonObject(with: Data(signUp.body)) as? [String: Any])
    return (server, try #require(json["idToken"] as? String), try #require(json["localId"] as? String), directory)
}

@Test func aSignedInUserIsTheRulesAuthOverRESTAndAForgedTokenIsRefused() async throws {
    let (server, idToken, uid, directory) = try await serverWithAccount(email: "ada@example.com")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try #require(try await send(
        server, .put, "/.settings/rules.json?auth=secret",
        body: #"{"rules": {"users": {"$uid": {".read": "auth.uid == $uid", ".write": "auth.uid == $uid && auth.token.email == 'ada@example.com'"}}}}"#
    ).status == 200)
    #expect(try await send(server, .put, "/users/\(uid)/name.json?auth=\(idToken)", body: #""Ada""#).status == 200)
    let bearer = try await send(server, .get, "/users/\(uid)/name.json", headers: ["authorization": "Bearer \(idToken)"])
    #expect(bearer.status == 200 && bearer.bodyText == #""Ada""#)
    #expect(try await send(server, .get, "/users/someone-else.json?auth=\(idToken)").status == 401)
    // The same claims, unsigned: not accepted outside emulator mode.
    let parts = idToken.split(separator: ".")
    let forged = "eyJhbGciOiJub25lIn0.\(parts[1])."
    let refused = try await send(server, .get, "/users/\(uid).json?auth=\(forged)")
    #expect(refused.status == 401)
    #expect(refused.bodyText == #"{"error":"Could not parse auth token."}"#)
}

/// Collects what a realtime session sends.
@Test func aRealtimeConnectionSignedInWithAnIDTokenGetsAcWhenItExpires() async throws {
    let (server, idToken, uid, directory) = try await serverWithAccount(email: "bob@example.com")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try #require(try await send(
        server, .put, "/.settings/rules.json?auth=secret",
        body: #"{"rules": {"users": {"$uid": {".read": "auth.uid == $uid"}}}}"#).status == 200)
    let sink = RecordingSink()
    let session = server.openRealtime(
        HTTPRequest(method: .get, path: "/.ws", queryItems: [("v", "5")], headers: ["host": "h"]), sink: sink)
    session.receive(frame: Array(#"{"t":"d","d":{"r":1,"a":"auth","b":{"cred":"\#(idToken)"}}}"#.utf8))
    session.receive(frame: Array(#"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/users/\#(uid)","h":""}}}"#.utf8))
    let auth = try #require(sink.frames.first { $0.contains(#""r":1,"#) })
    #expect(auth.contains(#""s":"ok""#) && auth.contains(#""uid":"\#(uid)""#) && auth.contains(#""expires":"#))
    #expect(sink.frames.last == #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#)
    sink.frames = []
    server.tick(nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 10 * 60 * 1000)  // not yet
    #expect(sink.frames.isEmpty)
    server.tick(nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 2 * 3600 * 1000)  // an hour past exp
    #expect(sink.frames == [#"{"t":"d","d":{"a":"ac","b":{"s":"expired_token","d":"Auth token is expired."}}}"#])
}
