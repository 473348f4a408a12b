import HearthTesting
import Testing
@testable import HearthCore

/// Query windows against Tests/Fixtures/queries/*.json: wire query objects exactly as clients send
/// them (docs/protocol.md §2.4), evaluated as §5.7 describes.
struct QueryFixtureTests {
    struct Case: NamedCase {
        let name: String
        let comment: String?
        let data: FixtureJSON
        let query: [String: FixtureJSON]
        let expected: [String]

        enum CodingKeys: String, CodingKey {
            case name, data, query, expected
            case comment = ".comment"
        }
    }

    static let cases = Fixtures.cases(Case.self, in: "queries")

    /// `QueryParams(wireFields:)` needs to see `{"sp": null}` as a present key holding
    /// `Node.empty`, which a parsed `Node` cannot express, so the fixture's object is read member
    /// by member.
    static func params(_ query: [String: FixtureJSON]) throws -> QueryParams {
        var fields: [String: Node] = [:]
        for (key, value) in query { fields[key] = try value.node }
        return try QueryParams(wireFields: fields)
    }

    @Test func fixturesCoverEveryQueryFile() {
        let files = Set(Self.cases.map(\.file))
        #expect(files.isSuperset(of: ["queries/wire-examples.json", "queries/windows.json", "queries/key-index.json"]))
        #expect(Self.cases.count >= 50)
    }

    @Test("Scanning the children gives the fixture's window", arguments: cases)
    func scannedWindowMatches(_ located: Located<Case>) throws {
        let fixture = located.value
        let params = try Self.params(fixture.query)
        let data = try fixture.data.node
        let keys = QueryWindow.entries(of: data, params: params).map(\.key.string)
        #expect(keys == fixture.expected)
        // The window as a node holds exactly those children, without a priority (§5.7 step 6).
        let window = QueryWindow.node(of: data, params: params)
        #expect(Set(window.children.keys.map(\.string)) == Set(fixture.expected))
        #expect(window.priority == nil || params.loadsAllData)
    }

    @Test("A kept index gives the same window as a scan", arguments: cases)
    func indexedWindowMatches(_ located: Located<Case>) throws {
        let fixture = located.value
        let params = try Self.params(fixture.query)
        var tree = DatabaseTree()
        try tree.set("q", to: try fixture.data.node)
        tree.ensureIndex(at: "q", by: params.index)
        #expect(tree.window(at: "q", params: params).map(\.key.string) == fixture.expected)
    }

    @Test func nullBoundsArePresentKeysNotMissingOnes() throws {
        // endAt(null) admits only null index values; no end admits everything.
        let withNull = try Self.params(["ep": .null, "i": .string("score")])
        let without = try Self.params(["i": .string("score")])
        #expect(withNull.end?.value == Node.empty)
        #expect(without.end == nil)
    }
}
