import Foundation
import HearthCore
import HearthTesting
import Testing

@testable import HearthClient

/// Firebase's sync-tree specification, the 108 cases Firebase's SDKs test their sync trees against
/// (listens with queries and tags, user sets and updates with their acknowledgements, server overwrites
/// and merges, and the exact events each listener sees). It is read at test time from
/// `<package root>/../shared/testdata/firebase-sync-point-spec/syncPointSpec.json` (the team's shared test
/// data, never copied here) and run as firebase-ios-sdk's FSyncPointTests.m runs it: every case twice, at
/// the root and under `foo/bar/baz`, on a fresh ``SyncTree`` each time.
enum SyncPointSpec {
    static let url: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/testdata/firebase-sync-point-spec/syncPointSpec.json")

    static var isAvailable: Bool { FileManager.default.fileExists(atPath: url.path) }

    /// The cases in file order; empty when the file is absent (the suite is then skipped).
    static let cases: [FixtureJSON] = {
        guard let data = try? Data(contentsOf: url) else { return [] }
        return (try? JSONDecoder().decode([FixtureJSON].self, from: data)) ?? []
    }()

    static var names: [String] { cases.compactMap { $0["name"]?.string } }

    static func `case`(named name: String) -> FixtureJSON? { cases.first { $0["name"]?.string == name } }
}

@Suite(.enabled(
    if: SyncPointSpec.isAvailable,
    "Firebase's syncPointSpec.json not found at <package root>/../shared/testdata/firebase-sync-point-spec"))
struct SyncPointSpecTests {
    @Test func theSpecHasItsHundredAndEightCases() {
        #expect(SyncPointSpec.names.count == 108)
        #expect(Set(SyncPointSpec.names).count == SyncPointSpec.names.count, "case names are unique")
    }

    @Test("Each case raises exactly the events the spec lists", arguments: SyncPointSpec.names)
    func syncPointCase(_ name: String) throws {
        let spec = try #require(SyncPointSpec.case(named: name))
        for base in [Path.root, Path("foo/bar/baz")] {
            var run = SpecRun(caseName: name, base: base)
            run.run(spec)
        }
    }
}

// MARK: - One run of one case

/// One case run on a fresh sync tree with every path under `base`: each step maps to the ``SyncTree``
/// call Firebase's runners make (FSyncPointTests.m), and the events it returns are compared with the
/// step's: exactly (same order) for listens and unlistens, as iOS's set match for every other step.
private struct SpecRun {
    let caseName: String
    let base: Path
    var tree = SyncTree()
    /// Each listen step is one listener: five registrations, one per event type (a registration takes one
    /// type here), made in the order a listener's initial events come (child_added, then value).
    var listeners: [RegistrationID: Listener] = [:]
    var byCallback: [Int64: [(id: RegistrationID, spec: QuerySpec)]] = [:]
    var nextRegistration: RegistrationID = 1
    /// Write ids: a runner-local counter advanced by every set (hidden ones too) and update.
    var nextWrite: Int64 = 0
    /// The listens the tree asked for: Firebase's stub listen provider fails on a duplicate start or the
    /// stop of a listen it does not hold.
    var started: Set<ListenKey> = []

    struct Listener {
        var path: Path
        var spec: QuerySpec
    }

    static let eventTypes: [ListenEventType] = [.childAdded, .childRemoved, .childMoved, .childChanged, .value]
    static let caseKeys: Set<String> = ["name", "steps", ".comment"]
    static let stepKeys: Set<String> = [
        "type", "path", "params", "callbackId", "data", "tag", "writeId", "revert", "visible", "events", ".comment",
    ]
    static let eventKeys: Set<String> = ["path", "type", "name", "prevName", "data"]
    static let paramKeys: Set<String> = [
        "tag", "orderBy", "orderByKey", "orderByPriority", "startAt", "endAt", "equalTo", "limitToFirst", "limitToLast",
    ]

    init(caseName: String, base: Path) {
        self.caseName = caseName
        self.base = base
    }

    mutating func run(_ spec: FixtureJSON) {
        if !spec.keys.isSubset(of: Self.caseKeys) {
            fail("unknown case keys \(spec.keys.subtracting(Self.caseKeys).sorted())")
            return
        }
        for (index, step) in (spec["steps"]?.array ?? []).enumerated() {
            guard perform(step, index: index) else { return }
        }
    }

    private func fail(_ message: String, step: Int? = nil, _ stepJSON: FixtureJSON? = nil) {
        var text = "\(caseName) (at \(base.isRoot ? "the root" : base.description))"
        if let step, let stepJSON {
            text += ", step \(step) \(stepJSON["type"]?.string ?? "?")"
            if let path = stepJSON["path"]?.string { text += " \"\(path)\"" }
            if let comment = stepJSON[".comment"]?.string { text += " (\(comment))" }
        }
        Issue.record(Comment(rawValue: text + ": " + message))
    }

    private func path(_ json: FixtureJSON?) -> Path { base.appending(path: Path(json?.string ?? "")) }

    /// Runs one step; false when the case cannot go on (a malformed step or a failed listen-provider check).
    private mutating func perform(_ step: FixtureJSON, index: Int) -> Bool {
        if !step.keys.isSubset(of: Self.stepKeys) {
            fail("unknown step keys \(step.keys.subtracting(Self.stepKeys).sorted())", step: index, step)
            return false
        }
        let expected = step["events"]?.array ?? []
        for event in expected where !event.keys.isSubset(of: Self.eventKeys) {
            fail("unknown event keys \(event.keys.subtracting(Self.eventKeys).sorted())", step: index, step)
            return false
        }
        var output = SyncOutput()
        var exact = false
        switch step["type"]?.string {
        case "listen":
            let spec = QuerySpec(path: path(step["path"]), query: query(step["params"]))
            for type in Self.eventTypes {
                let id = nextRegistration
                nextRegistration += 1
                listeners[id] = Listener(path: spec.path, spec: spec)
                if let callback = step["callbackId"]?.integer { byCallback[callback, default: []].append((id, spec)) }
                output.append(tree.addRegistration(id, spec: spec, type: type))
            }
            // The spec's tags were written to equal the tree's allocation (1, 2, … per run, for each new
            // view of a query that does not load all data); server steps pass them through.
            if let tag = step["params"]?["tag"]?.integer, !spec.isDefault {
                for case .start(let key, _, _) in output.listens where key.tag != tag {
                    fail("the tree tagged the query \(key.tag.map(String.init) ?? "nil"), the spec \(tag)", step: index, step)
                }
            }
            exact = true
        case "unlisten":
            let spec = QuerySpec(path: path(step["path"]), query: query(step["params"]))
            let callback = step["callbackId"]?.integer ?? -1
            for (id, registered) in byCallback[callback] ?? [] where registered == spec {
                output.append(tree.removeRegistration(id))
            }
            byCallback[callback]?.removeAll { $0.spec == spec }
            exact = true
        case "serverUpdate":
            let tag = step["tag"]?.integer
            output = tree.applyServerOverwrite(at: path(step["path"]), step["data"]?.nodeBuiltByHand ?? .empty, tag: tag)
        case "serverMerge":
            let children = (step["data"]?.object ?? [:]).map { (Path($0.key), $0.value.nodeBuiltByHand) }
            output = tree.applyServerMerge(at: path(step["path"]), children, tag: step["tag"]?.integer)
        case "set":
            let write = PendingWrite(
                id: nextWrite, kind: .set(path(step["path"]), step["data"]?.nodeBuiltByHand ?? .empty),
                visible: step["visible"]?.bool ?? true)
            nextWrite += 1
            output = tree.applyUserWrite(write)
        case "update":
            let children = (step["data"]?.object ?? [:]).map { (Path($0.key), $0.value.nodeBuiltByHand) }
            let write = PendingWrite(id: nextWrite, kind: .merge(path(step["path"]), children), visible: true)
            nextWrite += 1
            output = tree.applyUserWrite(write)
        case "ackUserWrite":
            output = tree.ackWrite(step["writeId"]?.integer ?? -1, revert: step["revert"]?.bool ?? false)
        case "suppressWarning":
            return true
        default:
            fail("unknown step type", step: index, step)
            return false
        }
        guard checkListens(output, step: index, step) else { return false }
        let actual = output.events
        let problem = exact ? exactMismatch(actual, expected) : setMismatch(actual, expected)
        if let problem {
            fail(
                "\(problem)\n  expected: \(expected.map(describeExpected))\n  actual:   \(actual.map(describe))",
                step: index, step)
        }
        return true
    }

    /// The stub listen provider's checks, and no listener cancelled.
    private mutating func checkListens(_ output: SyncOutput, step: Int, _ json: FixtureJSON) -> Bool {
        for change in output.listens {
            switch change {
            case .start(let key, _, _):
                if !started.insert(key).inserted {
                    fail("duplicate listen \(key)", step: step, json)
                    return false
                }
            case .stop(let key, _):
                if started.remove(key) == nil {
                    fail("stopped a listen never started: \(key)", step: step, json)
                    return false
                }
            }
        }
        if !output.cancelled.isEmpty {
            fail("listeners cancelled: \(output.cancelled.map(\.registration))", step: step, json)
            return false
        }
        return true
    }

    // MARK: Queries

    /// A listen's `params` as a query. Bounds without `name` take the sentinel (`[MIN_NAME]` for a start,
    /// `[MAX_NAME]` for an end); `index: null` is a bound at null, not an absent bound; `tag` is the
    /// spec's expected tag, not a query parameter.
    private func query(_ params: FixtureJSON?) -> WireQuery {
        var query = WireQuery()
        guard let params else { return query }
        for (key, value) in params.object {
            switch key {
            case "orderBy": query.index = .child(Path(value.string ?? ""))
            case "orderByKey": query.index = .key
            case "orderByPriority": query.index = .priority
            case "startAt": query.start = bound(value)
            case "endAt": query.end = bound(value)
            case "equalTo":
                query.start = bound(value)
                query.end = bound(value)
            case "limitToFirst": query.limit = (Int(value.integer ?? 0), false)
            case "limitToLast": query.limit = (Int(value.integer ?? 0), true)
            default: break  // "tag"; unknown keys fail below
            }
        }
        if !params.keys.isSubset(of: Self.paramKeys) {
            fail("unknown query parameters \(params.keys.subtracting(Self.paramKeys).sorted())")
        }
        return query
    }

    private func bound(_ json: FixtureJSON) -> WireQuery.Bound {
        WireQuery.Bound(value: json["index"]?.nodeBuiltByHand ?? .empty, name: json["name"]?.string, inclusive: true)
    }

    // MARK: Matching

    /// Same count, same order; type, name and previous name (child events) and data equal.
    private func exactMismatch(_ actual: [RaisedEvent], _ expected: [FixtureJSON]) -> String? {
        guard actual.count == expected.count else { return "\(actual.count) events, expected \(expected.count)" }
        for (position, (event, wanted)) in zip(actual, expected).enumerated()
        where !matches(event, wanted, checkingRemovedPrevious: true) {
            return "event \(position) differs"
        }
        return nil
    }

    /// FSyncPointTests.m's `actualEventSet:matchesExpected:`: the expected events in groups of consecutive
    /// events at one path; each group takes as many actual events, in order, all for listeners at that
    /// path; inside a group the events of one listener come in raise order (removed, added, moved, changed,
    /// value) and each matches a distinct expected event of the group (the group is a multiset: co-located
    /// listeners are not told apart).
    private func setMismatch(_ actual: [RaisedEvent], _ expected: [FixtureJSON]) -> String? {
        guard actual.count == expected.count else { return "\(actual.count) events, expected \(expected.count)" }
        var next = 0
        var groupStart = 0
        while groupStart < expected.count {
            let groupPath = path(expected[groupStart]["path"])
            var groupEnd = groupStart
            while groupEnd < expected.count && path(expected[groupEnd]["path"]) == groupPath { groupEnd += 1 }
            var remaining = Array(expected[groupStart..<groupEnd])
            var lastType: [String: EventType] = [:]
            for event in actual[next..<(next + remaining.count)] {
                guard let listener = listeners[event.registration] else { return "an event for an unknown registration" }
                guard listener.path == groupPath else {
                    return "\(describe(event)) came where events for \(groupPath.slashed) were expected"
                }
                let key = "\(listener.path.slashed)|\(listener.spec.query.identifier)"
                if let previous = lastType[key], event.type < previous {
                    return "\(event.type.rawValue) raised after \(previous.rawValue) for one listener"
                }
                lastType[key] = event.type
                guard let match = remaining.firstIndex(where: { matches(event, $0, checkingRemovedPrevious: false) }) else {
                    return "\(describe(event)) matches no expected event"
                }
                remaining.remove(at: match)
            }
            next += groupEnd - groupStart
            groupStart = groupEnd
        }
        return nil
    }

    /// Type, the child's name and previous name for child events (a removal's only when `checkingRemovedPrevious`),
    /// and the data by Firebase hash (priorities count, numbers compare as doubles, null equals empty).
    private func matches(_ event: RaisedEvent, _ wanted: FixtureJSON, checkingRemovedPrevious: Bool) -> Bool {
        guard event.type.rawValue == wanted["type"]?.string else { return false }
        if event.type != .value {
            guard event.path.last?.string == wanted["name"]?.string else { return false }
            if event.type != .childRemoved || checkingRemovedPrevious {
                guard event.previousKey?.string == wanted["prevName"]?.string else { return false }
            }
        }
        return event.node.hash == (wanted["data"]?.nodeBuiltByHand ?? .empty).hash
    }

    private func describe(_ event: RaisedEvent) -> String {
        let listener = listeners[event.registration]
        var text = listener?.path.slashed ?? "?"
        if let query = listener?.spec.query, query != WireQuery() { text += " \(query.identifier)" }
        text += " \(event.type.rawValue)"
        if event.type != .value {
            text += " \(event.path.last?.string ?? "") after \(event.previousKey?.string ?? "null")"
        }
        return text + " " + event.node.json(.export)
    }

    private func describeExpected(_ event: FixtureJSON) -> String {
        let type = event["type"]?.string ?? "?"
        var text = "\(path(event["path"]).slashed) \(type)"
        if type != "value" { text += " \(event["name"]?.string ?? "") after \(event["prevName"]?.string ?? "null")" }
        return text + " " + (event["data"]?.description ?? "null")
    }
}
