import Foundation
import Testing

@testable import HearthClient

@Suite(.serialized) struct DatabaseSmokeTests {
    @Test func aLocalWriteRaisesItsEventAtOnceAndTheServerAcknowledgesIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "smoke")
        let ref = database.reference(withPath: "jokes/j1")
        let values = Recorder<String>()
        ref.observe(.value) { values.append(json($0)) }
        try await ref.setValue(["text": "knock knock", "votes": 0])
        #expect(await values.wait { $0.contains(#"{"text":"knock knock","votes":0}"#) })
        let (status, body) = try server.rest("GET", "/jokes/j1", namespace: "smoke")
        #expect(status == 200)
        #expect(body == #"{"text":"knock knock","votes":0}"#)
    }

    @Test func anotherClientsWriteReachesAListener() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let reader = makeDatabase(server, namespace: "two")
        let writer = makeDatabase(server, namespace: "two")
        let added = Recorder<Seen>()
        reader.reference(withPath: "feed").observe(.childAdded, andPreviousSiblingKeyWith: { snapshot, previous in
            added.append(Seen(type: "added", key: snapshot.key, json: json(snapshot), previous: previous))
        })
        let first = writer.reference(withPath: "feed").childByAutoId()
        try await first.setValue("one")
        let second = writer.reference(withPath: "feed").childByAutoId()
        try await second.setValue("two")
        #expect(await added.wait { $0.count == 2 })
        #expect(added.all == [
            Seen(type: "added", key: first.key!, json: #""one""#, previous: nil),
            Seen(type: "added", key: second.key!, json: #""two""#, previous: first.key!),
        ])
    }

    @Test func valueCastsAsTheTutorialsCastIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "casts")
        let ref = database.reference(withPath: "post")
        try await ref.setValue(["title": "Hi", "votes": 3, "score": 2.5, "open": true, "tags": ["a", "b"]])
        let snapshot = try await ref.getData()
        let value = try #require(snapshot.value as? [String: AnyObject])
        #expect(value["title"] as? String == "Hi")
        #expect(value["votes"] as? Int == 3)
        #expect(value["score"] as? Double == 2.5)
        #expect(value["open"] as? Bool == true)
        #expect(value["tags"] as? [String] == ["a", "b"])
        let missing = try await database.reference(withPath: "nothing/here").getData()
        #expect(missing.value is NSNull)
        #expect(!missing.exists())
    }

    struct Post: Codable, Equatable {
        var title: String
        var votes: Int
        var tags: [String]
        @ServerTimestamp var createdAt: Date?
    }

    @Test func codableValuesRoundTripAndServerTimestampsResolve() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "codable")
        let ref = database.reference(withPath: "posts/p1")
        let acknowledged = Recorder<Bool>()
        try ref.setValue(from: Post(title: "Hello", votes: 2, tags: ["a", "b"])) { error in acknowledged.append(error == nil) }
        #expect(await acknowledged.wait { $0 == [true] })
        let post = try await ref.getData().data(as: Post.self)
        #expect(post.title == "Hello" && post.votes == 2 && post.tags == ["a", "b"])
        // The server's time replaced the placeholder: within a minute of now.
        let created = try #require(post.createdAt)
        #expect(abs(created.timeIntervalSinceNow) < 60)
        let (_, raw) = try server.rest("GET", "/posts/p1/createdAt", namespace: "codable")
        #expect(Int64(raw) != nil)
        // Nothing there: an optional decodes as nil, a struct throws.
        let missing = try await database.reference(withPath: "posts/none").getData()
        #expect(try missing.data(as: Post?.self) == nil)
        #expect(throws: DecodingError.self) { try missing.data(as: Post.self) }
    }
}
