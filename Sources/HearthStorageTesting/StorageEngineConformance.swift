public import HearthStorage
import HearthCore
import HearthSupport

/// Opens one engine's storage, again and again: each `open` is a restart that must see what earlier
/// engines made durable.
public protocol StorageEngineFixture: Sendable {
    func open() throws -> any StorageEngine
}

/// A case of the conformance suite failed: what was expected and what the engine did.
public struct ConformanceFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What every ``StorageEngine`` must do, run by each engine's tests against its own fixture:
///
///     @Test(arguments: StorageEngineConformance.caseNames)
///     func conformance(_ name: String) async throws {
///         try await StorageEngineConformance.run(name, on: MyFixture())
///     }
public enum StorageEngineConformance {
    public typealias Case = @Sendable (any StorageEngineFixture) async throws -> Void

    public static var caseNames: [String] { cases.map(\.0) }

    public static func run(_ name: String, on fixture: any StorageEngineFixture) async throws {
        guard let body = cases.first(where: { $0.0 == name })?.1 else { throw ConformanceFailure("no case named \(name)") }
        try await body(fixture)
    }

    /// Writes `steps` through a `DurableDatabase`, then restarts and checks the loaded tree equals the
    /// committed one.
    static func roundTrip(
        _ fixture: any StorageEngineFixture, _ steps: (DurableDatabase) async throws -> Void
    ) async throws -> Node {
        let engine = try fixture.open()
        let database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
        try await steps(database)
        let expected = database.root
        engine.close()
        let reopened = try fixture.open()
        defer { reopened.close() }
        let loaded = try reopened.load(progress: nil)
        guard loaded == expected else {
            throw ConformanceFailure("after a restart the engine loaded\n  \(loaded.json(.export))\nbut the committed tree was\n  \(expected.json(.export))")
        }
        return loaded
    }

    static func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw ConformanceFailure(message()) }
    }

    static let cases: [(String, Case)] = [
        ("an empty database loads as the empty node", { fixture in
            let engine = try fixture.open()
            defer { engine.close() }
            try expect(try engine.load(progress: nil).isEmpty, "a new database is not empty")
        }),
        ("leaves of every type survive a restart", { fixture in
            _ = try await roundTrip(fixture) { db in
                try await db.set("a/bool", to: Node(true))
                try await db.set("a/false", to: Node(false))
                try await db.set("a/int", to: Node(-42))
                try await db.set("a/big", to: Node(Int64(1) << 60))
                try await db.set("a/double", to: Node(3.25))
                try await db.set("a/huge", to: Node(1e300))
                try await db.set("a/string", to: Node("héllo \"quoted\" 🔥"))
                try await db.set("a/empty string", to: Node(""))
            }
        }),
        ("overwrites, removals and leaf-to-children changes", { fixture in
            let loaded = try await roundTrip(fixture) { db in
                try await db.set("x", to: Node("leaf"))
                try await db.set("x/y/z", to: Node(1))  // the leaf at x becomes an inner node
                try await db.set("p/q", to: Node(["r": Node(1), "s": Node(2)]))
                try await db.set("p/q", to: Node(7))  // children become a leaf
                try await db.set("gone/a", to: Node(1))
                try await db.set("gone/a", to: .empty)
                try await db.set("ab", to: Node(1))
                try await db.set("a", to: Node(["b": Node(2)]))
                try await db.set("a!", to: Node(3))
            }
            try expect(loaded.child(at: "gone").isEmpty, "a removed subtree came back")
        }),
        ("priorities on leaves and inner nodes", { fixture in
            let loaded = try await roundTrip(fixture) { db in
                try await db.set("users/ada", to: try Node(json: #"{".priority": 5, "name": "Ada", "age": {".value": 36, ".priority": "p"}}"#))
                try await db.set("users/bob/.priority", to: Node(1))  // on an empty node: ignored
                try await db.set("users/bob/name", to: Node("Bob"))
                try await db.set("users/bob/.priority", to: Node("b"))
                try await db.set("users/ada/name", to: Node("Ada L."))  // keeps ada's priority
            }
            try expect(loaded.child(at: "users/ada").priority == .number(5), "inner priority lost")
            try expect(loaded.child(at: "users/bob").priority == .string("b"), "priority write lost")
        }),
        ("a priority goes with the last child and does not come back", { fixture in
            let loaded = try await roundTrip(fixture) { db in
                try await db.set("n", to: try Node(json: #"{".priority": 1, "c": 1}"#))
                try await db.set("n/c", to: .empty)
                try await db.set("n/d", to: Node(2))
            }
            try expect(loaded.child(at: "n").priority == nil, "a stale priority came back")
        }),
        ("rewriting the only child of a prioritized node keeps the node's priority", { fixture in
            let loaded = try await roundTrip(fixture) { db in
                try await db.set("n", to: try Node(json: #"{".priority": 5, "c": 1}"#))
                try await db.set("n/c", to: Node(2))  // below `n`: a removal, then a put
            }
            try expect(loaded.child(at: "n").priority == .number(5), "the priority was lost")
        }),
        ("removing below a leaf leaves the leaf", { fixture in
            let loaded = try await roundTrip(fixture) { db in
                try await db.set("a", to: Node("x"))
                try await db.set("a/b", to: .empty)
            }
            try expect(loaded.child(at: "a") == Node("x"), "the leaf is gone")
        }),
        ("a multi-path update is stored whole", { fixture in
            _ = try await roundTrip(fixture) { db in
                try await db.set("u/a", to: Node(1))
                try await db.update("u", with: [("a", .empty), ("b/c", Node(2)), ("d", Node(["e": Node(true)]))])
            }
        }),
        ("integer keys load in Firebase key order", { fixture in
            let loaded = try await roundTrip(fixture) { db in
                for key in ["10", "9", "-1", "a", "007", "7", "2147483648"] {
                    try await db.set(Path([ChildKey("list"), ChildKey(key)]), to: Node(key))
                }
            }
            let keys = loaded.child(at: "list").children.keys.map(\.string)
            try expect(keys == ["-1", "7", "007", "9", "10", "2147483648", "a"], "keys loaded as \(keys)")
        }),
        ("the root can be a leaf and be replaced", { fixture in
            _ = try await roundTrip(fixture) { db in
                try await db.set("a", to: Node(1))
                try await db.set(.root, to: Node("root leaf"))
            }
            _ = try await roundTrip(fixture) { db in
                try await db.set("b", to: Node(2))
            }
        }),
        ("random writes match the model tree across restarts", { fixture in
            var random = SplitMix64(seed: 7)
            var model = Node.empty
            for _ in 0..<4 {
                model = try await roundTrip(fixture) { db in
                    for _ in 0..<150 {
                        let depth = 1 + random.next(below: 3)
                        let keys = (0..<depth).map { _ in ChildKey(["a", "b", "1", "2", "c"][random.next(below: 5)]) }
                        let path = Path(keys)
                        switch random.next(below: 6) {
                        case 0: try await db.set(path, to: .empty)
                        case 1: try await db.set(path.appending(.priorityKey), to: Node(random.next(below: 3)))
                        case 2: try await db.update(Path(Array(keys.prefix(1))), with: [("x", Node(1)), ("y", .empty)])
                        case 3: try await db.set(path, to: try Node(json: #"{".priority": "p", "k": 1, "1": {"z": false}}"#))
                        default: try await db.set(path, to: Node(random.next(below: 100)))
                        }
                    }
                }
            }
            _ = model
        }),
        ("replaceAll swaps the whole tree atomically", { fixture in
            let engine = try fixture.open()
            let db = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
            try await db.set("old", to: Node(1))
            engine.close()
            let imported = try Node(json: #"{"new": {"a": 1, ".priority": 2}, "list": {"0": "x", "1": "y"}}"#)
            let second = try fixture.open()
            try second.replaceAll(with: imported, progress: nil)
            second.close()
            let third = try fixture.open()
            defer { third.close() }
            try expect(try third.load(progress: nil) == imported, "the import did not replace the tree")
        }),
        ("a failed commit is reported and never reaches readers", { fixture in
            // Engines that cannot inject failures skip this case (the SQLite engine's are fault tests).
            let probe = try fixture.open()
            probe.close()
            guard let store = (probe as? InMemoryStorageEngine)?.store else { return }
            let engine = InMemoryStorageEngine(store: store)
            let db = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
            try await db.set("kept", to: Node(1))
            store.injectFailures(1)
            do {
                try await db.set("lost", to: Node(2))
                throw ConformanceFailure("a failed commit was acknowledged")
            } catch let error as StorageError {
                try expect(error.code == .diskFull, "wrong error \(error)")
            }
            try expect(db.root.child(at: "lost").isEmpty, "readers see a write that failed")
            await db.waitForPendingWrites()
            try await db.set("after", to: Node(3))
            try expect(try engine.load(progress: nil) == db.root, "storage and the committed tree differ")
        }),
    ]
}


