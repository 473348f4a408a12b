import HearthTesting
import Testing
@testable import HearthCore

/// Key, value and priority order against Tests/Fixtures/ordering/*.json (docs/protocol.md §5.6).
struct OrderingFixtureTests {
    struct Case: NamedCase {
        let name: String
        let comment: String?
        let kind: String
        let ascending: [FixtureJSON]?
        let equal: [[FixtureJSON]]?
        let i: String?
        let data: FixtureJSON?
        let expected: [String]?

        enum CodingKeys: String, CodingKey {
            case name, kind, ascending, equal, i, data, expected
            case comment = ".comment"
        }
    }

    static let cases = Fixtures.cases(Case.self, in: "ordering")

    @Test func everyKindOfOrderingHasFixtures() {
        let kinds = Set(Self.cases.map(\.value.kind))
        #expect(kinds == ["key", "value", "children"])
    }

    @Test("Fixture orders hold", arguments: cases)
    func fixtureOrdersHold(_ located: Located<Case>) throws {
        let fixture = located.value
        switch fixture.kind {
        case "key": try checkKeyOrder(fixture)
        case "value": try checkValueOrder(fixture)
        case "children": try checkChildOrder(fixture)
        default: Issue.record("unknown kind \(fixture.kind)")
        }
    }

    /// Every pair compares as listed, a map built from the keys in reverse keeps them in order,
    /// and so does a parsed JSON object holding them.
    func checkKeyOrder(_ fixture: Case) throws {
        let keys = (fixture.ascending ?? []).compactMap(\.stringValue)
        #expect(keys.count == fixture.ascending?.count, "key lists hold strings")
        for (i, a) in keys.enumerated() {
            for (j, b) in keys.enumerated() {
                let expected = i < j ? -1 : (i == j ? 0 : 1)
                #expect(ChildKey.compare(ChildKey(a), ChildKey(b)).signum() == expected, "\(debug(a)) vs \(debug(b))")
            }
        }
        var map = ChildrenMap()
        for key in keys.reversed() { map[ChildKey(key)] = Node(true) }
        #expect(map.keys.map(\.string) == keys)

        let object = "{" + keys.reversed().map { FixtureJSON.quoted($0) + ":1" }.joined(separator: ",") + "}"
        #expect(try Node(json: object).children.keys.map(\.string) == keys)
    }

    func checkValueOrder(_ fixture: Case) throws {
        let values = try (fixture.ascending ?? []).map { try $0.node }
        for (i, a) in values.enumerated() {
            for (j, b) in values.enumerated() {
                let expected = i < j ? -1 : (i == j ? 0 : 1)
                #expect(ValueOrder.compare(a, b).signum() == expected, "\(a.json()) vs \(b.json())")
            }
        }
        for group in fixture.equal ?? [] {
            let nodes = try group.map { try $0.node }
            for a in nodes {
                for b in nodes { #expect(ValueOrder.compare(a, b) == 0, "\(a.json()) vs \(b.json())") }
            }
        }
    }

    /// Sorting by index position, and building a `ChildIndex`, both give the expected order.
    func checkChildOrder(_ fixture: Case) throws {
        let data = try (fixture.data ?? .null).node
        let expected = try #require(fixture.expected)
        let index = QueryIndex(wireName: fixture.i)
        var positions: [IndexPosition] = []
        data.children.forEach { key, child in
            let value = index == .key ? Node.empty : index.indexValue(of: child)
            positions.append(IndexPosition(value: value, key: key))
            return true
        }
        positions.sort()
        #expect(positions.map(\.key.string) == expected)
        if index != .key {
            #expect(ChildIndex(index: index, of: data).positions.keys.map(\.key.string) == expected)
        }
    }

    func debug(_ key: String) -> String {
        key.unicodeScalars.map { $0.isASCII ? String($0) : "U+" + String($0.value, radix: 16, uppercase: true) }.joined()
    }
}
