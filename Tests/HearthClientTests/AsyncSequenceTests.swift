import Foundation
import Testing

@testable import HearthClient

@Suite(.serialized) struct AsyncSequenceTests {
    @Test func snapshotsYieldEachValueAndCancellingRemovesTheListener() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "async")
        let ref = database.reference(withPath: "n")
        try await ref.setValue(0)
        let seen = Recorder<Int>()
        let task = Task {
            for try await snapshot in ref.snapshots {
                seen.append(snapshot.value as? Int ?? -1)
                if seen.all.count == 3 { break }
            }
        }
        #expect(await seen.wait { $0 == [0] })
        try await ref.setValue(1)
        try await ref.setValue(2)
        try await task.value
        #expect(seen.all == [0, 1, 2])
        // The listener is gone: the repo holds no view for the location any more. Ending the loop ended
        // the stream, whose termination queued the removal on the repo's queue before the task returned:
        // a block run on that queue now runs after it.
        let views = database.repo.queue.sync { database.repo.debugViewCount }
        #expect(views == 0)
    }

    @Test func childEventsComeInFirebaseOrder() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let database = makeDatabase(server, namespace: "async-children")
        let list = database.reference(withPath: "list")
        try await list.setValue(["a": 1, "b": 2])
        let events = Recorder<String>()
        let task = Task {
            for try await event in list.queryOrderedByValue().childEvents() {
                events.append("\(event.type) \(event.snapshot.key) \(event.previousSiblingKey ?? "-")")
            }
        }
        #expect(await events.wait { $0.count == 2 })
        try await list.child("a").setValue(3)  // moves after b
        #expect(await events.wait { $0.count == 4 })
        #expect(events.all == ["childAdded a -", "childAdded b a", "childMoved a b", "childChanged a b"])
        task.cancel()
    }

    @Test func aRefusedListenEndsTheSequenceWithPermissionDenied() async throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.rest("PUT", "/.settings/rules", namespace: "denied", body: #"{"rules": {".read": false, ".write": false}}"#)
        let database = makeDatabase(server, namespace: "denied")
        await #expect(throws: NSError.self) {
            for try await _ in database.reference(withPath: "secret").snapshots {}
        }
    }
}
