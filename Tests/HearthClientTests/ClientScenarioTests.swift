import Foundation
import HearthCore
import Testing

@testable import HearthClient

/// The scenarios of `Tests/Fixtures/client-scenarios` (shared with the JS SDK's runner,
/// `Tests/compat/js/client_scenarios.cjs`): HearthClient must raise exactly the expected events, which are
/// the events the official JS SDK raises for the same steps.
private let scenarioDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/client-scenarios")

private func scenarioNames() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: scenarioDirectory.path)) ?? [])
        .filter { $0.hasSuffix(".json") }.sorted()
}

@Suite(.serialized) struct ClientScenarioTests {
    @Test("Each shared scenario raises the expected events", arguments: scenarioNames())
    func scenario(file: String) async throws {
        let scenario = try Node(jsonBytes: Array(try Data(contentsOf: scenarioDirectory.appendingPathComponent(file))))
        let server = try TestServer()
        defer { server.stop() }
        let namespace = "scenario"
        let initial = scenario.child("initial")
        if !initial.isEmpty {
            #expect(try server.rest("PUT", "", namespace: namespace, body: initial.json(.export)).0 == 200)
        }
        let me = makeDatabase(server, namespace: namespace)
        let other = makeDatabase(server, namespace: namespace)
        let events = Recorder<Node>()
        scenario.child("listen").children.forEach { _, listener in
            let id = listener.child("id").stringValue ?? "?"
            var query: DatabaseQuery = me.reference(withPath: listener.child("path").stringValue ?? "")
            query = Self.apply(listener.child("query"), to: query)
            listener.child("events").children.forEach { _, typeNode in
                let name = typeNode.stringValue ?? ""
                guard let type = Self.eventTypes[name] else { return true }
                query.observe(type, andPreviousSiblingKeyWith: { snapshot, previous in
                    let key: Node = type == .value ? .empty : Node(snapshot.key)
                    events.append(Self.record(id, name, key, previous, snapshot.node))
                })
                return true
            }
            return true
        }
        for (_, step) in Self.ordered(scenario.child("steps")) {
            if case .integer(let count)? = step.child("wait").leafValue {
                #expect(await events.wait { $0.count >= count }, "waiting for \(count) events in \(file)")
                continue
            }
            let client = step.child("by").stringValue == "other" ? other : me
            if let path = step.child("set").stringValue {
                try await client.reference(withPath: path).setValue(FoundationValues.value(of: step.child("value"), exportFormat: true) as Any?)
            } else if let path = step.child("update").stringValue {
                let values = FoundationValues.value(of: step.child("values")) as? [String: Any] ?? [:]
                try await client.reference(withPath: path).updateChildValues(values)
            } else if let path = step.child("increment").stringValue {
                try await client.reference(withPath: path).runTransactionBlock { data in
                    data.value = ((data.value as? Int) ?? 0) + 1
                    return .success(withValue: data)
                }
            }
        }
        let expected = Self.ordered(scenario.child("expect")).map { _, row in
            // Nulls leave no child in a node: read the five cells by index.
            let cells = (0..<5).map { row.child(ChildKey(String($0))) }
            return Self.record(
                cells[0].stringValue ?? "", cells[1].stringValue ?? "", cells[2], cells[3].stringValue, cells[4])
        }
        try await Task.sleep(for: .milliseconds(150))  // nothing more may come
        #expect(events.all.map { $0.json(.rest) } == expected.map { $0.json(.rest) }, "\(file)")
    }

    static let eventTypes: [String: DataEventType] = [
        "child_added": .childAdded, "child_removed": .childRemoved, "child_changed": .childChanged,
        "child_moved": .childMoved, "value": .value,
    ]

    /// One event as a node: `[listener, type, key, previous, value]` (nulls kept as empty strings for
    /// the comparison, since nodes drop nulls).
    static func record(_ id: String, _ type: String, _ key: Node, _ previous: String?, _ value: Node) -> Node {
        Node([
            "0": Node(id), "1": Node(type), "2": key.isEmpty ? Node("-") : key, "3": Node(previous ?? "-"),
            "4": value.isEmpty ? Node("null") : Node(value.json(.rest)),
        ])
    }

    /// An array's elements in index order (nodes hold arrays as children "0", "1", …).
    static func ordered(_ node: Node) -> [(Int, Node)] {
        var elements: [(Int, Node)] = []
        node.children.forEach { key, child in
            if let index = Int(key.string) { elements.append((index, child)) }
            return true
        }
        return elements.sorted { $0.0 < $1.0 }
    }

    static func apply(_ query: Node, to base: DatabaseQuery) -> DatabaseQuery {
        var result = base
        switch query.child("orderBy").stringValue {
        case nil: break
        case "key": result = result.queryOrderedByKey()
        case "value": result = result.queryOrderedByValue()
        case "priority": result = result.queryOrderedByPriority()
        case let child?: result = result.queryOrdered(byChild: child)
        }
        func value(_ name: String) -> Any? { FoundationValues.value(of: query.child(ChildKey(name))) }
        if query.children[ChildKey("startAt")] != nil { result = result.queryStarting(atValue: value("startAt")) }
        if query.children[ChildKey("endAt")] != nil { result = result.queryEnding(atValue: value("endAt")) }
        if query.children[ChildKey("equalTo")] != nil { result = result.queryEqual(toValue: value("equalTo")) }
        if case .integer(let n)? = query.child("limitToFirst").leafValue { result = result.queryLimited(toFirst: UInt(n)) }
        if case .integer(let n)? = query.child("limitToLast").leafValue { result = result.queryLimited(toLast: UInt(n)) }
        return result
    }
}
