import Testing
@testable import HearthCore

/// Random sets, removes and multi-path updates on a `DatabaseTree`, checked after every write
/// against a naive model made of nested Swift dictionaries.
struct DatabaseTreePropertyTests {
    /// The reference: plain dictionaries, pruned by hand the way docs/protocol.md §5.1 says
    /// (a location left without children is empty, and so disappears from its parent).
    indirect enum Model: Equatable {
        case leaf(Int)
        case object([String: Model])

        /// The value at `keys`, nil when nothing is there.
        func value(at keys: ArraySlice<String>) -> Model? {
            guard let first = keys.first else { return self }
            guard case .object(let members) = self else { return nil }
            return members[first]?.value(at: keys.dropFirst())
        }

        /// `model` with `keys` replaced by `value` (nil removes), emptied objects pruned.
        static func setting(_ model: Model?, at keys: ArraySlice<String>, to value: Model?) -> Model? {
            guard let first = keys.first else { return value }
            var members: [String: Model] = [:]
            switch model {
            case .object(let existing)?: members = existing
            case .leaf?:
                // Firebase leaves a leaf alone when removing below it (the JS SDK's
                // LeafNode.updateChild returns the leaf for an empty child); a real value replaces it.
                if value == nil { return model }
            case nil: break
            }
            members[first] = setting(members[first], at: keys.dropFirst(), to: value)
            return members.isEmpty ? nil : .object(members)
        }

        var node: Node {
            switch self {
            case .leaf(let value): return Node(value)
            case .object(let members):
                var children = ChildrenMap()
                for (key, member) in members { children[ChildKey(key)] = member.node }
                return Node(children: children)
            }
        }
    }

    struct WriteGenerator {
        var random: SeededGenerator
        static let keys = ["a", "b", "c", "1", "10", "🐵"]

        mutating func keys(_ range: ClosedRange<Int>) -> [String] {
            (0..<Int.random(in: range, using: &random)).map { _ in Self.keys.randomElement(using: &random)! }
        }

        /// A value, nil for null; objects may hold nothing but nulls, which makes them null too.
        mutating func value(depth: Int = 0) -> Model? {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: return nil
            case 1, 2: return .leaf(Int.random(in: 0..<100, using: &random))
            default:
                guard depth < 2 else { return .leaf(-1) }
                var members: [String: Model] = [:]
                for key in keys(0...3) { members[key] = value(depth: depth + 1) }
                return Model.setting(nil, at: [][...], to: members.isEmpty ? nil : .object(members))
                    .flatMap { Self.pruned($0) }
            }
        }

        static func pruned(_ model: Model) -> Model? {
            guard case .object(let members) = model else { return model }
            let kept = members.compactMapValues(pruned)
            return kept.isEmpty ? nil : .object(kept)
        }
    }

    @Test("Random writes leave the tree equal to the dictionary model", arguments: Array(UInt64(1)...6))
    func randomWritesMatchTheModel(seed: UInt64) throws {
        var generator = WriteGenerator(random: SeededGenerator(seed: seed))
        var tree = DatabaseTree()
        var model: Model?
        for step in 0..<400 {
            let path = generator.keys(0...3)
            switch Int.random(in: 0..<5, using: &generator.random) {
            case 0, 1:
                let value = generator.value()
                try tree.set(location(path), to: value?.node ?? .empty)
                model = Model.setting(model, at: path[...], to: value)
            case 2:
                try tree.remove(location(path))
                model = Model.setting(model, at: path[...], to: nil)
            default:
                // A multi-path update: relative paths with distinct first keys never overlap.
                var firsts = Set<String>()
                var values: [([String], Model?)] = []
                for _ in 0..<Int.random(in: 1...3, using: &generator.random) {
                    let relative = generator.keys(1...2)
                    guard firsts.insert(relative[0]).inserted else { continue }
                    values.append((relative, generator.value()))
                }
                let writes: [(Path, Node)] = values.map { relative, value in (location(relative), value?.node ?? .empty) }
                try tree.update(location(path), with: writes)
                for (relative, value) in values { model = Model.setting(model, at: (path + relative)[...], to: value) }
            }
            #expect(tree.root == (model?.node ?? .empty), "step \(step)")
            let probe = generator.keys(0...3)
            #expect(tree.value(at: location(probe)) == (model?.value(at: probe[...])?.node ?? .empty), "step \(step) at \(probe)")
        }
    }

    func location(_ keys: [String]) -> Path { Path(keys.map { ChildKey($0) }) }

    @Test func removingBelowALeafKeepsTheLeaf() throws {
        var tree = DatabaseTree()
        try tree.set("a", to: Node(5))
        try tree.remove("a/b")
        #expect(tree.value(at: "a") == Node(5))
        try tree.update("", with: [("a/b/c", .empty)])
        #expect(tree.value(at: "a") == Node(5))
    }

    @Test func overlappingUpdatesChangeNothing() throws {
        var tree = DatabaseTree()
        try tree.set("a", to: Node(1))
        #expect(throws: DataError.self) { try tree.update("", with: [("x", Node(1)), ("x/y", Node(2))]) }
        #expect(tree.root == Node(["a": Node(1)]))
    }
}
