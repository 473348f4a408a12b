import HearthTesting
import Testing
@testable import HearthCore

/// Listener events against Tests/Fixtures/events/*.json, in the style of the JS SDK's
/// syncPointSpec.json (docs/protocol.md §3.2): writes on a `DatabaseTree`, events from a
/// `View`.
struct EventFixtureTests {
    struct Case: NamedCase {
        let name: String
        let comment: String?
        let data: FixtureJSON
        let listen: Listen
        let initial: [ExpectedEvent]?
        let steps: [Step]

        enum CodingKeys: String, CodingKey {
            case name, data, listen, initial, steps
            case comment = ".comment"
        }
    }

    struct Listen: Decodable, Sendable {
        let path: String
        let query: [String: FixtureJSON]?
    }

    struct Step: Decodable, Sendable {
        let write: Write
        let events: [ExpectedEvent]
    }

    struct Write: Decodable, Sendable {
        /// `set`, `remove` or `update`.
        let op: String
        let path: String
        let value: FixtureJSON?
        /// For `update`: relative paths and their values.
        let values: [String: FixtureJSON]?
    }

    struct ExpectedEvent: Decodable, Sendable {
        let type: String
        let key: String?
        let previousKey: String?
        /// For `value` events: the expected node in export form, when the fixture gives it.
        let value: FixtureJSON?

        /// Tells an explicit `"value": null` (the view is now empty) from no `value` at all.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(String.self, forKey: .type)
            key = try container.decodeIfPresent(String.self, forKey: .key)
            previousKey = try container.decodeIfPresent(String.self, forKey: .previousKey)
            value = container.contains(.value) ? try container.decode(FixtureJSON.self, forKey: .value) : nil
        }

        enum CodingKeys: String, CodingKey { case type, key, previousKey, value }

        var record: EventRecord { EventRecord(type: type, key: key, previousKey: previousKey) }
    }

    static let cases = Fixtures.cases(Case.self, in: "events")

    /// Every case runs with and without a kept index at the listen, since views find previous
    /// keys and windows through one when it exists.
    static let arguments: [(Located<Case>, Bool)] = cases.flatMap { [($0, false), ($0, true)] }

    @Test func fixturesIncludeTheSpecExample() {
        #expect(Self.cases.contains { $0.value.name.contains("key-2 is deleted") })
    }

    @Test("Writes raise the fixture's events", arguments: arguments)
    func writesRaiseTheFixtureEvents(_ located: Located<Case>, indexed: Bool) throws {
        let fixture = located.value
        var tree = DatabaseTree(root: try fixture.data.node)
        let path = Path(fixture.listen.path)
        let params = try fixture.listen.query.map(QueryFixtureTests.params) ?? .all
        if indexed { tree.ensureIndex(at: path, by: params.index) }

        var view = View(path: path, params: params, tree: tree)
        let initial = view.initialEvents(tree: tree)
        if let expected = fixture.initial { try check(initial, against: expected, step: "initial") }

        for (number, step) in fixture.steps.enumerated() {
            let changes = try apply(step.write, to: &tree)
            let events = view.apply(changes, tree: tree)
            try check(events, against: step.events, step: "step \(number + 1)")
        }
    }

    func apply(_ write: Write, to tree: inout DatabaseTree) throws -> ChangeSet {
        let path = Path(write.path)
        switch write.op {
        case "set": return try tree.set(path, to: try (write.value ?? .null).node)
        case "remove": return try tree.remove(path)
        case "update":
            let values = try (write.values ?? [:]).map { (Path($0.key), try $0.value.node) }
            return try tree.update(path, with: values)
        default:
            Issue.record("unknown write op \(write.op)")
            return ChangeSet()
        }
    }

    func check(_ events: [Event], against expected: [ExpectedEvent], step: String) throws {
        #expect(events.map(EventRecord.init) == expected.map(\.record), "\(step)")
        for (event, expectation) in zip(events, expected) {
            if let value = expectation.value {
                #expect(event.node == (try value.node), "\(step): \(event) carries \(event.node.json(.export))")
            }
        }
    }
}
