import Foundation
import Synchronization
import Testing

@testable import HearthClient

/// What the official SDKs do, checked against a real `hearth serve`: local events first, reverts on
/// refusal, transactions, onDisconnect, `.info`, query windows.
@Suite(.serialized) struct DatabaseSemanticsTests {
    @Test func aRefusedWriteIsUndoneWithTheEventsAListenerWouldSee() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (status, _) = try server.rest(
            "PUT", "/.settings/rules", namespace: "locked",
            body: #"{"rules": {".read": true, "open": {".write": true}, "closed": {".write": false}}}"#)
        #expect(status == 200)
        let database = makeDatabase(server, namespace: "locked")
        let seen = Recorder<String>()
        database.reference(withPath: "closed").observe(.value) { seen.append(json($0)) }
        #expect(await seen.wait { $0 == ["null"] })
        let outcome = Recorder<Int>()
        database.reference(withPath: "closed").setValue("nope") { error, _ in
            outcome.append((error as NSError?)?.code ?? 0)
        }
        // The local event at once, then, on the refusal, back to what the server has.
        #expect(await outcome.wait { $0.count == 1 })
        #expect(outcome.all == [1])  // permission_denied
        #expect(await seen.wait { $0 == ["null", #""nope""#, "null"] })
        let error = await #expect(throws: NSError.self) { try await database.reference(withPath: "closed/x").setValue(1) }
        #expect(error?.domain == "com.firebase")
        #expect(error?.localizedDescription.isEmpty == false)
        try await database.reference(withPath: "open/x").setValue(1)
    }

    @Test func concurrentTransactionsOnOneCounterEndAtTheExactSum() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let clients = (0..<6).map { _ in makeDatabase(server, namespace: "counter") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in clients {
                group.addTask {
                    for _ in 0..<5 {
                        let (committed, _) = try await client.reference(withPath: "count").runTransactionBlock { data in
                            data.value = ((data.value as? Int) ?? 0) + 1
                            return .success(withValue: data)
                        }
                        #expect(committed)
                    }
                }
            }
            try await group.waitForAll()
        }
        let (_, body) = try server.rest("GET", "/count", namespace: "counter")
        #expect(body == "30")
    }

    @Test func anAbortedTransactionCommitsNothing() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "abort")
        try await database.reference(withPath: "v").setValue(5)
        let (committed, snapshot) = try await database.reference(withPath: "v").runTransactionBlock { _ in .abort() }
        #expect(!committed)
        #expect(snapshot.value as? Int == 5)
    }

    @Test func onDisconnectWritesRunWhenTheConnectionDrops() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let watcher = makeDatabase(server, namespace: "presence")
        let leaving = makeDatabase(server, namespace: "presence")
        let presence = Recorder<String>()
        watcher.reference(withPath: "users/ada").observe(.value) { presence.append(json($0)) }
        try await leaving.reference(withPath: "users/ada").setValue("online")
        try await leaving.reference(withPath: "users/ada").onDisconnectSetValue("offline")
        #expect(await presence.wait { $0.last == #""online""# })
        leaving.goOffline()
        #expect(await presence.wait { $0.last == #""offline""# })
    }

    @Test func infoConnectedFollowsTheConnection() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "info")
        let connected = Recorder<Bool>()
        database.reference(withPath: ".info/connected").observe(.value) { connected.append($0.value as? Bool ?? false) }
        #expect(await connected.wait { $0.last == true })
        database.goOffline()
        #expect(await connected.wait { $0.last == false })
        database.goOnline()
        #expect(await connected.wait { $0.last == true })
        let offset = try await database.reference(withPath: ".info/serverTimeOffset").getData()
        #expect(offset.value is NSNumber)
    }

    @Test func aLimitedQuerySlidesItsWindowWithChildEvents() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "window")
        let scores = database.reference(withPath: "scores")
        try await scores.setValue(["a": 1, "b": 5, "c": 3])
        let events = Recorder<Seen>()
        let top = scores.queryOrderedByValue().queryLimited(toLast: 2)
        for (type, name) in [(DataEventType.childAdded, "added"), (.childRemoved, "removed"), (.childMoved, "moved"), (.childChanged, "changed")] {
            top.observe(type, andPreviousSiblingKeyWith: { snapshot, previous in
                events.append(Seen(type: name, key: snapshot.key, json: json(snapshot), previous: previous))
            })
        }
        #expect(await events.wait { $0.count == 2 })
        #expect(events.all == [Seen(type: "added", key: "c", json: "3", previous: nil), Seen(type: "added", key: "b", json: "5", previous: "c")])
        try await scores.child("d").setValue(4)  // enters; c leaves
        #expect(await events.wait { $0.count == 4 })
        #expect(Array(events.all[2...]) == [
            Seen(type: "removed", key: "c", json: "3", previous: nil), Seen(type: "added", key: "d", json: "4", previous: nil),
        ])
        try await scores.child("d").setValue(9)  // moves past b
        #expect(await events.wait { $0.count >= 6 })
        #expect(Array(events.all[4..<6]) == [
            Seen(type: "moved", key: "d", json: "9", previous: "b"), Seen(type: "changed", key: "d", json: "9", previous: "b"),
        ])
        let snapshot = try await top.getData()
        #expect((snapshot.children.allObjects as? [DataSnapshot])?.map(\.key) == ["b", "d"])
    }

    @Test func getDataOfflineWithNothingCachedFailsAsFirebaseDoes() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "offline")
        // goOffline and the read are queued on the repo's queue in this order: the read finds it offline.
        database.goOffline()
        let error = await #expect(throws: NSError.self) { try await database.reference(withPath: "x").getData() }
        #expect(error?.domain == "com.firebase.core")
        #expect(error?.code == 1)
    }

    @Test func invalidPathsAndValuesFailBeforeAnythingIsSent() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "invalid")
        let bad = database.reference(withPath: "a.b")
        await #expect(throws: NSError.self) { try await bad.setValue(1) }
        await #expect(throws: NSError.self) { try await database.reference(withPath: "x").setValue(["k.y": 1]) }
        await #expect(throws: NSError.self) { try await database.reference(withPath: "x").setValue(Double.nan) }
        await #expect(throws: NSError.self) { try await database.reference(withPath: ".info/connected").setValue(true) }
        let (_, body) = try server.rest("GET", "/x", namespace: "invalid")
        #expect(body == "null")
    }
}
