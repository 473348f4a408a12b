import HearthTesting
import Testing
@testable import HearthCore

/// REST output's array rule against Tests/Fixtures/arrays.json (docs/protocol.md §5.4).
struct ArrayFixtureTests {
    struct Case: NamedCase {
        let name: String
        let comment: String?
        let data: FixtureJSON
        let rest: String
        let export: String?
        let pretty: String?

        enum CodingKeys: String, CodingKey {
            case name, data, rest, export, pretty
            case comment = ".comment"
        }
    }

    static let cases: [Located<Case>] = (Fixtures.load(CaseFile<Case>.self, "arrays.json")?.cases ?? [])
        .map { Located(file: "arrays.json", value: $0) }

    @Test("REST output writes array-shaped objects as arrays", arguments: cases)
    func restOutputMatches(_ located: Located<Case>) throws {
        let fixture = located.value
        let node = try fixture.data.node
        #expect(node.json(.rest) == fixture.rest)
        if let export = fixture.export { #expect(node.json(.export) == export) }
        if let pretty = fixture.pretty { #expect(node.json(.pretty(.rest)) == pretty) }
    }

    @Test("REST output reads back as the same tree without priorities", arguments: cases)
    func restOutputReadsBack(_ located: Located<Case>) throws {
        let node = try located.value.data.node
        #expect(try Node(json: node.json(.rest)) == node.removingPriorities())
        #expect(try Node(json: node.json(.export)) == node)
    }
}

extension Node {
    /// The tree with every priority dropped: what REST output without `format=export` carries.
    func removingPriorities() -> Node {
        let base = withPriority(nil)
        guard base.hasChildren else { return base }
        var children = ChildrenMap()
        base.children.forEach { key, child in
            children[key] = child.removingPriorities()
            return true
        }
        return Node(children: children)
    }
}
