import HearthTesting
import HearthProtocol
import HearthCore
import HearthStorage
import Testing

@testable import HearthServer

/// The seed apps' shape: anyone signed in reads profiles, only the owner writes theirs, with validation.
private let profileRules = """
    {
      "rules": {
        "profiles": {
          ".read": "auth != null",
          "$uid": {
            ".write": "auth != null && auth.uid == $uid",
            ".validate": "newData.hasChildren(['name']) && newData.child('name').isString()",
            ".indexOn": ["age"]
          }
        }
      }
    }
    """

private func asUser(_ uid: String?) -> String {
    let auth = uid.map { #"{"uid":"\#($0)"}"# } ?? "null"
    return "auth=owner&auth_variable_override=\(auth)"
}

private func deploy(_ server: DatabaseServer, _ rules: String) async throws {
    let deployed = try await send(server, .put, "/.settings/rules.json", body: rules, headers: ["authorization": "Bearer owner"])
    try #require(deployed.status == 200, "\(deployed.bodyText)")
}

@Test func readsAndWritesFollowTheDeployedRules() async throws {
    let server = makeServer()
    try await deploy(server, profileRules)
    // The owner writes their profile; someone else may not, and neither may a signed-out client.
    #expect(try await send(server, .put, "/profiles/ada.json?\(asUser("ada"))", body: #"{"name":"Ada"}"#).status == 200)
    let other = try await send(server, .put, "/profiles/ada.json?\(asUser("bob"))", body: #"{"name":"Bob"}"#)
    #expect(other.status == 401)
    #expect(other.bodyText == #"{"error":"Permission denied"}"#)
    #expect(try await send(server, .put, "/profiles/ada.json?\(asUser(nil))", body: #"{"name":"X"}"#).status == 401)
    // Validation: a profile without a string name is refused, and nothing was written.
    #expect(try await send(server, .put, "/profiles/ada.json?\(asUser("ada"))", body: #"{"name":5}"#).status == 401)
    #expect(try await send(server, .get, "/profiles/ada/name.json?\(asUser("bob"))").bodyText == #""Ada""#)
    // Reads: signed-in users only; the root is not readable even by them.
    #expect(try await send(server, .get, "/profiles.json?\(asUser(nil))").status == 401)
    #expect(try await send(server, .get, "/.json?\(asUser("ada"))").status == 401)
    // The admin bypasses the rules.
    #expect(try await send(server, .get, "/.json", headers: ["authorization": "Bearer owner"]).status == 200)
}

@Test func multiPathUpdatesAreAllOrNothing() async throws {
    let server = makeServer()
    try await deploy(server, profileRules)
    let mixed = try await send(
        server, .patch, "/profiles.json?\(asUser("ada"))", body: #"{"ada/name":"Ada","bob/name":"Bob"}"#)
    #expect(mixed.status == 401)
    #expect(try await send(server, .get, "/profiles.json", headers: ["authorization": "Bearer owner"]).bodyText == "null")
    #expect(try await send(server, .patch, "/profiles.json?\(asUser("ada"))", body: #"{"ada/name":"Ada"}"#).status == 200)
}

@Test func invalidRulesAreRefusedWithTheirLineAndTheOldRulesStay() async throws {
    let server = makeServer()
    try await deploy(server, profileRules)
    let bad = try await send(
        server, .put, "/.settings/rules.json", body: "{\n  \"rules\": {\n    \".read\": \"auth.uid ==\"\n  }\n}",
        headers: ["authorization": "Bearer owner"])
    #expect(bad.status == 400)
    #expect(bad.bodyText.contains("Line 3"))
    #expect(try await send(server, .get, "/.settings/rules.json", headers: ["authorization": "Bearer owner"]).bodyText == profileRules)
}

@Test func newRulesCancelStreamsThatLostTheirRead() async throws {
    let server = makeServer()
    try await deploy(server, profileRules)
    let stream = RecordingResponder()
    server.handle(
        HTTPRequest(method: .get, path: "/profiles.json", queryItems: [("auth", "owner"), ("auth_variable_override", #"{"uid":"ada"}"#)],
                    headers: ["accept": "text/event-stream"]),
        responder: stream)
    #expect(stream.streamStatus == 200)
    try await deploy(server, #"{"rules": {"profiles": {".read": "auth.uid == 'bob'"}}}"#)
    #expect(stream.text.hasSuffix("event: cancel\ndata: null\n\n"))
    #expect(stream.finished)
}

@Test func withoutEmulatorTheDefaultRulesAreLocked() async throws {
    let server = makeServer(emulator: false, adminToken: "secret")
    #expect(try await send(server, .get, "/.settings/rules.json?auth=secret").bodyText.contains(#"".read": false"#))
    #expect(try await send(server, .get, #"/x.json?auth=secret&auth_variable_override={"uid":"u"}"#).status == 401)
    try #require(try await send(
        server, .put, "/.settings/rules.json?auth=secret", body: #"{"rules": {".read": "auth.uid == 'u'"}}"#).status == 200)
    #expect(try await send(server, .get, #"/x.json?auth=secret&auth_variable_override={"uid":"u"}"#).status == 200)
    #expect(try await send(server, .get, "/x.json").status == 401)
}

@Test func aConditionalWriteTheRulesRefuseIsRefusedBeforeItsHashIsCompared() async throws {
    let server = makeServer()
    try await deploy(server, #"{"rules": {"secret": {".write": "auth != null"}, "items": {".read": "query.limitToFirst <= 2"}}}"#)
    _ = try await send(server, .put, "/secret.json", body: #""s3cr3t""#, headers: ["authorization": "Bearer owner"])
    // Signed out: 401, never a 412 carrying the current value.
    for method in [HTTPRequest.Method.delete, .put] {
        let refused = try await send(
            server, method, "/secret.json?\(asUser(nil))", body: method == .put ? "1" : nil, headers: ["if-match": "\"bogus\""])
        #expect(refused.status == 401)
        #expect(!refused.bodyText.contains("s3cr3t"))
    }
    // Signed in, the write is allowed but the value is not readable: a stale hash answers 401, not the value.
    let stale = try await send(server, .put, "/secret.json?\(asUser("ada"))", body: "1", headers: ["if-match": "\"bogus\""])
    #expect(stale.status == 401)
    #expect(!stale.bodyText.contains("s3cr3t"))
}

@Test func aReaderWithAStaleHashHearsItIsStaleBeforeTheRulesDecide() async throws {
    // A counter the rules move only by one from its current value: a transaction built on an old
    // value must be told it is stale (and retry), not refused for good.
    let server = makeServer()
    try await deploy(server, #"{"rules": {"counter": {".read": "auth != null", ".write": "auth != null && newData.val() == data.val() + 1"}}}"#)
    _ = try await send(server, .put, "/counter.json", body: "5", headers: ["authorization": "Bearer owner"])
    let stale = try await send(server, .put, "/counter.json?\(asUser("ada"))", body: "2", headers: ["if-match": "\"bogus\""])
    #expect(stale.status == 412)
    let current = try #require(stale.header("etag"))
    let retried = try await send(server, .put, "/counter.json?\(asUser("ada"))", body: "6", headers: ["if-match": current])
    #expect(retried.status == 200)
    // With the current hash, the rules still decide.
    let jump = try await send(server, .put, "/counter.json?\(asUser("ada"))", body: "9", headers: ["if-match": try #require(retried.header("etag"))])
    #expect(jump.status == 401)
}
