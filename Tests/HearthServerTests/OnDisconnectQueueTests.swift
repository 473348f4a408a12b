import HearthCore
import Testing

@testable import HearthServer

struct OnDisconnectQueueTests {
    static let user = Caller(isAdmin: false, auth: try! Node(json: #"{"uid":"u1"}"#))

    @Test("Recording at a path replaces what was recorded at or below it")
    func recordingReplacesBelow() throws {
        var queue = OnDisconnectQueue()
        let recorded1 = queue.record([(Path("p/a/x"), Node(1)), (Path("p/b"), Node(2))], as: .admin, limit: 10)
        #expect(recorded1)
        let recorded2 = queue.record([(Path("p/a"), Node(3))], as: .admin, limit: 10)
        #expect(recorded2)
        #expect(queue.operations.map(\.path.description).sorted() == ["p/a", "p/b"])
    }

    @Test("Cancelling below a recorded overwrite keeps its other children")
    func cancellingSplitsAnOverwriteAbove() throws {
        var queue = OnDisconnectQueue()
        _ = queue.record([(Path("p"), try Node(json: #"{"a":{"x":1,"y":2},"b":3}"#))], as: .admin, limit: 10)
        queue.cancel(at: Path("p/a/x"))
        let kept = Dictionary(uniqueKeysWithValues: queue.operations.map { ($0.path.description, $0.value.json()) })
        #expect(kept == ["p/a/y": "2", "p/b": "3"])
    }

    @Test("Over the limit nothing is recorded")
    func overTheLimitNothingChanges() {
        var queue = OnDisconnectQueue()
        let recorded3 = queue.record([(Path("a"), Node(1)), (Path("b"), Node(1))], as: .admin, limit: 2)
        #expect(recorded3)
        let recorded4 = queue.record([(Path("c"), Node(1))], as: .admin, limit: 2)
        #expect(!recorded4)
        #expect(queue.count == 2)
    }

    @Test("Draining groups runs of one credential into one write each, and empties the queue")
    func drainGroupsByCredential() {
        var queue = OnDisconnectQueue()
        _ = queue.record([(Path("a"), Node(1)), (Path("b"), Node(2))], as: Self.user, limit: 10)
        _ = queue.record([(Path("c"), Node(3))], as: .admin, limit: 10)
        let groups = queue.drain()
        #expect(groups.map(\.values.count) == [2, 1])
        #expect(groups.first?.caller.auth == Self.user.auth && groups.last?.caller.isAdmin == true)
        #expect(queue.count == 0)
    }
}
