import HearthCore
import HearthProtocol
import HearthWire
import HearthSupport
import Testing

@testable import HearthServer

/// FanOut.plan against the code it replaced (82d6808's Namespace.broadcast for SSE, and
/// RealtimeSession.deliver + ListenerIndex for realtime), copied here verbatim in behaviour, on random
/// trees, random writes (sets, multi-path merges, `.priority` writes, empty merges) and random
/// subscriptions (plain and query; realtime, SSE, SSE export), over sequences of writes so query
/// windows carry from one write to the next.
struct FanOutDifferentialTests {
    // MARK: The old code (82d6808), as it decided what each stream / listen receives.

    /// Old `Namespace.Write.touches` (SSE query streams): NOT normalized.
    static func oldSSETouches(_ write: Write, _ location: Path) -> Bool {
        switch write {
        case .set(let path): return path.overlaps(location)
        case .update(let path, let keys): return keys.contains { path.appending(path: $0).overlaps(location) }
        }
    }

    static func oldSSEEvent(for write: Write, at location: Path, root: Node, exportFormat: Bool) -> [UInt8]? {
        let format: JSONFormat = exportFormat ? .export : .rest
        switch write {
        case .set(let path):
            if let relative = path.relative(to: location) {
                return SSE.event("put", path: relative, data: root.child(at: path), format: format)
            }
            if location.relative(to: path) != nil {
                return SSE.event("put", path: .root, data: root.child(at: location), format: format)
            }
            return nil
        case .update(let path, let keys):
            if let relative = path.relative(to: location) {
                var data: [UInt8] = [UInt8(ascii: "{")]
                for (index, key) in keys.enumerated() {
                    if index > 0 { data.append(UInt8(ascii: ",")) }
                    Node(key.description).appendJSON(to: &data)
                    data.append(UInt8(ascii: ":"))
                    root.child(at: path.appending(path: key)).appendJSON(to: &data, format: format)
                }
                data.append(UInt8(ascii: "}"))
                return SSE.event("patch", pathText: relative.slashed, dataJSON: data)
            }
            if keys.contains(where: { path.appending(path: $0).overlaps(location) }) {
                return SSE.event("put", path: .root, data: root.child(at: location), format: format)
            }
            return nil
        }
    }

    static func normalized(_ path: Path) -> Path { path.last == .priorityKey ? (path.parent ?? path) : path }

    static func oldRealtimeTouches(_ write: Write, _ location: Path) -> Bool {
        switch write {
        case .set(let path): return normalized(path).overlaps(location)
        case .update(let path, let keys): return keys.contains { normalized(path.appending(path: $0)).overlaps(location) }
        }
    }

    static func oldMayPush(_ write: Write, to location: Path) -> Bool {
        if case .update(let path, _) = write, location.contains(path) { return true }
        return oldRealtimeTouches(write, location)
    }

    static func oldChanged(_ location: Path, in changes: ChangeSet) -> Bool {
        for change in changes.changes {
            guard let relative = location.relative(to: change.path) else { continue }
            if change.old.child(at: relative) != change.new.child(at: relative) { return true }
        }
        return false
    }

    static func oldPushes(for write: Write, at location: Path, root: Node, changes: ChangeSet) -> [[UInt8]] {
        switch write {
        case .set(let written):
            let path = normalized(written)
            if location.contains(path) { return [WireEncoder.set(path: path, node: root.child(at: path))] }
            if path.contains(location) {
                guard oldChanged(location, in: changes) else { return [] }
                return [WireEncoder.set(path: location, node: root.child(at: location))]
            }
            return []
        case .update(let path, let keys):
            if location.contains(path) {
                var data: [UInt8] = [UInt8(ascii: "{")]
                for (index, key) in keys.enumerated() {
                    if index > 0 { data.append(UInt8(ascii: ",")) }
                    Node(key.description).appendJSON(to: &data)
                    data.append(UInt8(ascii: ":"))
                    root.child(at: normalized(path.appending(path: key))).appendJSON(to: &data, format: .export)
                }
                data.append(UInt8(ascii: "}"))
                if keys.contains(where: { $0.last == .priorityKey }) {
                    return keys.map {
                        let full = normalized(path.appending(path: $0))
                        return WireEncoder.set(path: full, node: root.child(at: full))
                    }
                }
                return [WireEncoder.push(.merge, path: path, dataJSON: data)]
            }
            guard path.contains(location) else { return [] }
            var messages: [[UInt8]] = []
            for key in keys {
                let full = normalized(path.appending(path: key))
                if full.contains(location) {
                    guard oldChanged(location, in: changes) else { return [] }
                    return [WireEncoder.set(path: location, node: root.child(at: location))]
                }
                if location.contains(full) { messages.append(WireEncoder.set(path: full, node: root.child(at: full))) }
            }
            return messages
        }
    }

    /// One subscription, as the old code kept it (a stream, or one listen of a session).
    final class OldSubscription {
        let location: Path
        let encoding: FanOut.Encoding
        let params: QueryParams?
        var window: Node
        let session: Int  // listens of one session are found together (ListenerIndex found the session)
        init(location: Path, encoding: FanOut.Encoding, params: QueryParams?, window: Node, session: Int) {
            self.location = location
            self.encoding = encoding
            self.params = params
            self.window = window
            self.session = session
        }
    }

    /// What the old code sent each subscription for one committed write.
    static func oldDeliveries(_ subs: [OldSubscription], write: Write, root: Node, changes: ChangeSet) -> [[[UInt8]]] {
        var out = Array(repeating: [[UInt8]](), count: subs.count)
        // SSE: every stream.
        for (i, s) in subs.enumerated() {
            guard case .sse(let export) = s.encoding else { continue }
            if let params = s.params {
                guard oldSSETouches(write, s.location) else { continue }
                let window = QueryWindow.node(of: root.child(at: s.location), params: params)
                if window == s.window { continue }
                s.window = window
                out[i].append(SSE.event("put", path: .root, data: window, format: export ? .export : .rest))
                continue
            }
            if let event = oldSSEEvent(for: write, at: s.location, root: root, exportFormat: export), !event.isEmpty {
                out[i].append(event)
            }
        }
        // Realtime: sessions with a listen overlapping write.locations, then every listen of theirs.
        let locations = write.locations
        var reached = Set<Int>()
        for s in subs {
            guard case .realtime = s.encoding else { continue }
            if locations.contains(where: { $0.overlaps(s.location) }) { reached.insert(s.session) }
        }
        for (i, s) in subs.enumerated() {
            guard case .realtime(let tag) = s.encoding, reached.contains(s.session) else { continue }
            if let params = s.params {
                guard oldRealtimeTouches(write, s.location) else { continue }
                let window = QueryWindow.node(of: root.child(at: s.location), params: params)
                guard window != s.window else { continue }
                s.window = window
                out[i].append(WireEncoder.set(path: s.location, node: window, tag: tag))
            } else {
                if oldMayPush(write, to: s.location) {
                    out[i] += oldPushes(for: write, at: s.location, root: root, changes: changes)
                }
            }
        }
        return out
    }

    // MARK: Random scenarios

    static let keys = ["a", "b", "c"]

    static func randomPath(_ g: inout SplitMix64, maxDepth: Int = 3) -> Path {
        let depth = Int(g.next() % UInt64(maxDepth + 1))
        return Path((0..<depth).map { _ in keys[Int(g.next() % 3)] }.joined(separator: "/"))
    }

    static func randomValue(_ g: inout SplitMix64, depth: Int) -> String {
        let roll = g.next() % 10
        if depth >= 3 || roll < 4 {
            switch g.next() % 4 {
            case 0: return "null"
            case 1: return "\"s\(g.next() % 3)\""
            default: return "\(g.next() % 5)"
            }
        }
        var parts: [String] = []
        for key in keys where g.next() % 2 == 0 { parts.append("\"\(key)\":\(randomValue(&g, depth: depth + 1))") }
        if g.next() % 4 == 0, !parts.isEmpty { parts.append("\".priority\":\(g.next() % 3)") }
        return "{" + parts.joined(separator: ",") + "}"
    }

    static func randomParams(_ g: inout SplitMix64) -> QueryParams {
        let index: QueryIndex
        switch g.next() % 4 {
        case 0: index = .key
        case 1: index = .value
        case 2: index = .priority
        default: index = .child(Path("a"))
        }
        let anchor: QueryLimit.Anchor = g.next() % 2 == 0 ? .first : .last
        var params = QueryParams(index: index, limit: QueryLimit(count: 1 + Int(g.next() % 2), anchor: anchor))
        if g.next() % 3 == 0, index == .key {
            params.start = QueryBound(value: Node("b"), name: .min)
        }
        return params
    }

    /// A random write and the shape fan-out is given for it, applied to `tree`.
    static func randomWrite(_ g: inout SplitMix64, tree: inout DatabaseTree) -> (Write, ChangeSet)? {
        if g.next() % 2 == 0 {
            var path = randomPath(&g)
            let value: Node
            if g.next() % 5 == 0, !path.isRoot {
                path = path.appending(.priorityKey)
                value = Node(Int64(g.next() % 3))
            } else {
                value = try! Node(json: randomValue(&g, depth: path.count))
            }
            guard let changes = try? tree.set(path, to: value) else { return nil }
            return (.set(path), changes)
        }
        let base = randomPath(&g, maxDepth: 2)
        var relatives: [Path] = []
        let count = Int(g.next() % 4)  // 0 keys: an empty merge
        for _ in 0..<count {
            var relative = randomPath(&g, maxDepth: 2)
            if relative.isRoot { relative = Path(keys[Int(g.next() % 3)]) }
            if g.next() % 5 == 0 { relative = relative.appending(.priorityKey) }
            if relatives.contains(where: { $0.overlaps(relative) }) { continue }
            relatives.append(relative)
        }
        var values: [(Path, Node)] = []
        for relative in relatives {
            let value = relative.last == .priorityKey
                ? Node(Int64(g.next() % 3)) : try! Node(json: randomValue(&g, depth: base.count + relative.count))
            values.append((relative, value))
        }
        guard let changes = try? tree.update(base, with: values) else { return nil }
        return (.update(base, relatives), changes)
    }

    @Test("FanOut.plan delivers to every subscription exactly what 82d6808 did, write after write")
    func planMatchesTheOldBroadcasts() {
        var mismatches: [String] = []
        var compared = 0, queryMessages = 0
        for seed in 0..<2000 {
            var g = SplitMix64(seed: UInt64(seed))
            var tree = DatabaseTree(root: try! Node(json: Self.randomValue(&g, depth: 0)))
            var fanOut = FanOut()
            var olds: [OldSubscription] = []
            var targets: [FanOutTests.RecordingTargetAlias] = []
            let subscriptionCount = 1 + Int(g.next() % 12)
            var sessionCount = 0
            for id in 0..<subscriptionCount {
                var location = Self.randomPath(&g)
                if !location.isRoot, g.next() % 8 == 0 { location = location.appending(.priorityKey) }  // GET /a/.priority.json
                let encoding: FanOut.Encoding
                switch g.next() % 3 {
                case 0: encoding = .realtime(tag: Int64(id))
                case 1: encoding = .sse(exportFormat: false)
                default: encoding = .sse(exportFormat: true)
                }
                let params: QueryParams? = g.next() % 3 == 0 ? Self.randomParams(&g) : nil
                let window = params.map { QueryWindow.node(of: tree.root.child(at: location), params: $0) } ?? .empty
                // Realtime listens share sessions now and then (the old index found the session).
                let session: Int
                if case .realtime = encoding, sessionCount > 0, g.next() % 2 == 0 {
                    session = Int(g.next() % UInt64(sessionCount))
                } else {
                    session = sessionCount
                    sessionCount += 1
                }
                let target = FanOutTests.RecordingTargetAlias("\(id)")
                targets.append(target)
                fanOut.subscribe(FanOut.Key(subscriber: UInt64(id), location: location, tag: nil),
                                 FanOut.Subscription(target: target, encoding: encoding, params: params, window: window))
                olds.append(OldSubscription(location: location, encoding: encoding, params: params, window: window, session: session))
            }
            for step in 0..<6 {
                guard let (write, changes) = Self.randomWrite(&g, tree: &tree) else { continue }
                let root = tree.root
                let expected = Self.oldDeliveries(olds, write: write, root: root, changes: changes)
                for target in targets { target.received = [] }
                for delivery in fanOut.plan(CommittedChange(write: write, root: root, changes: changes)) {
                    _ = delivery.target.deliver(delivery.messages)
                }
                compared += expected.reduce(0) { $0 + $1.count }
                for (i, old) in olds.enumerated() where old.params != nil { queryMessages += expected[i].count }
                for (i, target) in targets.enumerated() where target.received != expected[i] {
                    let got = target.received.map { String(decoding: $0, as: UTF8.self) }
                    let want = expected[i].map { String(decoding: $0, as: UTF8.self) }
                    mismatches.append("seed \(seed) step \(step) \(write) sub \(i) \(olds[i].encoding) at /\(olds[i].location.slashed) params \(olds[i].params.map { "\($0)" } ?? "-"): got \(got) want \(want)")
                }
            }
        }
        #expect(compared > 2000 && queryMessages > 200, "compared \(compared) messages, \(queryMessages) to queries")
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches; first: \(mismatches.prefix(5).joined(separator: "\n"))")
    }
}

extension FanOutTests {
    typealias RecordingTargetAlias = RecordingTarget
}
