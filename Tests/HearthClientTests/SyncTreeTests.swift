import HearthCore
import Testing

@testable import HearthClient

/// The sync tree alone (no server, no threads): what a listener sees as local writes, server data and
/// acknowledgements arrive in every order the connection can deliver them.
struct SyncTreeTests {
    private func describe(_ output: SyncOutput) -> [String] {
        output.events.map { event in
            var text = "\(event.registration) \(event.type.rawValue)"
            if event.type != .value { text += " \(event.path.last?.string ?? "")" }
            if let previous = event.previousKey { text += " after \(previous.string)" }
            return text + " " + event.node.json(.rest)
        }
    }

    private func node(_ json: String) -> Node { (try? Node(json: json)) ?? .empty }

    @Test func localWritesRaiseChildEventsAtOnceAndValueOnlyOnceComplete() {
        var tree = SyncTree()
        var output = tree.addRegistration(1, spec: QuerySpec(path: "list"), type: .childAdded)
        output.append(tree.addRegistration(2, spec: QuerySpec(path: "list"), type: .value))
        #expect(output.listens.count == 1)  // one default listen for both
        #expect(output.events.isEmpty)  // nothing known yet
        let write = tree.applyUserWrite(PendingWrite(id: 1, kind: .set("list/a", Node(1)), visible: true))
        #expect(describe(write) == ["1 child_added a 1"])  // no value: the location is not complete
        // The server's data at the location is all of it: the view is complete with it, before the ok.
        let data = tree.applyServerOverwrite(at: "list", node(#"{"a":1,"b":2}"#), tag: nil)
        #expect(describe(data) == ["1 child_added b after a 2", #"2 value {"a":1,"b":2}"#])
        #expect(describe(tree.listenComplete(ListenKey(path: "list", tag: nil))).isEmpty)
    }

    @Test func aValueListenerSeesNothingUntilItsLocationIsComplete() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "v"), type: .value)
        #expect(describe(tree.applyUserWrite(PendingWrite(id: 1, kind: .set("v/a", Node(1)), visible: true))).isEmpty)
        #expect(describe(tree.applyServerOverwrite(at: "v/b", Node(2), tag: nil)).isEmpty)
        #expect(describe(tree.applyServerOverwrite(at: "v", node(#"{"b":2}"#), tag: nil)) == [#"1 value {"a":1,"b":2}"#])
    }

    @Test func anOkCompletesAListenEvenWithoutData() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "g"), type: .value)
        #expect(describe(tree.applyServerOverwrite(at: "g/x", Node(1), tag: nil)).isEmpty)  // part of it only
        // The server sends nothing when the listen's hash matched what is cached: the ok says it is all here.
        #expect(describe(tree.listenComplete(ListenKey(path: "g", tag: nil))) == [#"1 value {"x":1}"#])
    }

    @Test func aSetAboveMakesAViewCompleteWithoutTheServer() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "a/b"), type: .value)
        let output = tree.applyUserWrite(PendingWrite(id: 1, kind: .set("a", node(#"{"b":{"c":3}}"#)), visible: true))
        #expect(describe(output) == [#"1 value {"c":3}"#])
    }

    @Test func aRefusedWriteIsUndoneAndAnAcceptedOneStays() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "p"), type: .value)
        _ = tree.applyServerOverwrite(at: "p", Node("server"), tag: nil)
        _ = tree.listenComplete(ListenKey(path: "p", tag: nil))
        #expect(describe(tree.applyUserWrite(PendingWrite(id: 7, kind: .set("p", Node("mine")), visible: true))) == [#"1 value "mine""#])
        #expect(describe(tree.ackWrite(7, revert: true)) == [#"1 value "server""#])
        _ = tree.applyUserWrite(PendingWrite(id: 8, kind: .set("p", Node("kept")), visible: true))
        // The server's push comes before its ok (§3.2): nothing changes, then the ack changes nothing.
        #expect(describe(tree.applyServerOverwrite(at: "p", Node("kept"), tag: nil)).isEmpty)
        #expect(describe(tree.ackWrite(8, revert: false)).isEmpty)
    }

    @Test func aTransactionRerunShowsItsNewValue() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "n"), type: .value)
        _ = tree.addRegistration(2, spec: QuerySpec(path: ""), type: .childChanged)
        _ = tree.applyServerOverwrite(at: "n", Node(1), tag: nil)
        _ = tree.applyUserWrite(PendingWrite(id: 1, kind: .set("n", Node(2)), visible: true))
        // The server's value changed meanwhile: the transaction runs again and its write is replaced.
        let rerun = tree.replaceWrite(PendingWrite(id: 1, kind: .set("n", Node(3)), visible: true))
        #expect(describe(rerun) == ["1 value 3", "2 child_changed n 3"])
    }

    @Test func serverDataUnderAPendingWriteStaysHiddenUntilTheWriteIsDone() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "doc"), type: .value)
        _ = tree.applyServerOverwrite(at: "doc", node(#"{"x":1}"#), tag: nil)
        _ = tree.listenComplete(ListenKey(path: "doc", tag: nil))
        _ = tree.applyUserWrite(PendingWrite(id: 1, kind: .set("doc/x", Node(2)), visible: true))
        // Another client's write to the same key arrives while ours is pending: ours still shows.
        #expect(describe(tree.applyServerOverwrite(at: "doc/x", Node(5), tag: nil)).isEmpty)
        #expect(tree.visibleValue(at: "doc/x") == Node(2))
        // Ours is refused: theirs shows.
        #expect(describe(tree.ackWrite(1, revert: true)) == [#"1 value {"x":5}"#])
    }

    @Test func aFilteredViewKeepsItsOwnTaggedWindow() {
        var tree = SyncTree()
        var query = WireQuery()
        query.index = .key
        query.limit = (2, true)
        let output = tree.addRegistration(1, spec: QuerySpec(path: "feed", query: query), type: .childAdded)
        guard case .start(let key, _, _)? = output.listens.first, let tag = key.tag else {
            Issue.record("no tagged listen: \(output.listens)")
            return
        }
        _ = tree.applyServerOverwrite(at: "feed", node(#"{"b":2,"c":3}"#), tag: tag)
        _ = tree.listenComplete(key)
        // Untagged data below the location (sent for default listens) goes through the window: a child
        // before it stays out.
        #expect(describe(tree.applyServerOverwrite(at: "feed/a", Node(1), tag: nil)).isEmpty)
        let slid = tree.applyServerMerge(at: "feed", [(Path("b"), .empty), (Path("d"), Node(4))], tag: tag)
        #expect(describe(slid) == ["1 child_added d after c 4"])
        #expect(tree.listenHash(key) == node(#"{"c":3,"d":4}"#).hash)
        // Untagged data at the location is all of it: it replaces the window's data, as in the official SDKs.
        #expect(describe(tree.applyServerOverwrite(at: "feed", node(#"{"z":9}"#), tag: nil)) == ["1 child_added z 9"])
        #expect(tree.listenHash(key) == node(#"{"z":9}"#).hash)
    }

    @Test func aQuerysOwnOkKeepsOnlyItsWindow() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "q"), type: .value)
        _ = tree.applyServerOverwrite(at: "q", node(#"{"a":1,"b":2}"#), tag: nil)
        var query = WireQuery()
        query.index = .key
        query.limit = (1, true)
        let spec = QuerySpec(path: "q", query: query)
        let listen = tree.addRegistration(2, spec: spec, type: .childAdded)
        _ = tree.addRegistration(3, spec: spec, type: .childRemoved)
        #expect(describe(listen) == ["2 child_added b 2"])  // from the default listen's data, unfiltered
        guard case .start(let key, _, let hash)? = listen.listens.first else {
            Issue.record("no tagged listen: \(listen.listens)")
            return
        }
        #expect(hash == node(#"{"b":2}"#).hash)  // the window's: the server sends nothing when it matches
        _ = tree.listenComplete(key)
        // From its ok on, the server sends the query every change to its window: the view keeps the
        // window only, rather than windowing the location's data again on every change.
        let removed = tree.applyServerOverwrite(at: "q/b", .empty, tag: nil)
        #expect(describe(removed) == [#"1 value {"a":1}"#, "3 child_removed b 2"])
        #expect(describe(tree.applyServerOverwrite(at: "q", node(#"{"a":1}"#), tag: key.tag)) == ["2 child_added a 1"])
    }

    @Test func listenHashesAreTheCachedDataOfCompleteListensOnly() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "h"), type: .value)
        let key = ListenKey(path: "h", tag: nil)
        #expect(tree.listenHash(key) == "")  // nothing cached: the server must send it
        _ = tree.applyServerOverwrite(at: "h/x", Node(1), tag: nil)
        #expect(tree.listenHash(key) == "")  // part of it only
        _ = tree.applyServerOverwrite(at: "h", Node("data"), tag: nil)
        #expect(tree.listenHash(key) == Node("data").hash)  // the push at the location is all of it
        #expect(tree.activeListens.map(\.2) == [Node("data").hash])
        // Unlistened, nothing keeps the data current: listened again, it is asked for again.
        _ = tree.removeRegistration(1)
        _ = tree.addRegistration(2, spec: QuerySpec(path: "h"), type: .value)
        #expect(tree.listenHash(key) == "")
    }

    @Test func aListenBelowStaysCompleteWhenTheOneAboveGoes() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "a"), type: .value)
        _ = tree.addRegistration(2, spec: QuerySpec(path: "a/b"), type: .value)
        _ = tree.applyServerOverwrite(at: "a", node(#"{"b":{"c":1},"d":2}"#), tag: nil)
        _ = tree.removeRegistration(1)
        // a/b's own listen keeps its data current; nothing keeps the rest of a current.
        #expect(tree.listenHash(ListenKey(path: "a/b", tag: nil)) == node(#"{"c":1}"#).hash)
        #expect(tree.completeValue(QuerySpec(path: "a")) == nil)
    }

    @Test func anUndoneWriteLeavesAnIncompleteViewTheChildrenItKnowsWhole() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "a"), type: .childAdded)
        _ = tree.addRegistration(2, spec: QuerySpec(path: "a"), type: .childRemoved)
        _ = tree.addRegistration(3, spec: QuerySpec(path: "a/b"), type: .value)
        // The set covers both views: complete at once. The view below raises first.
        let set = tree.applyUserWrite(PendingWrite(id: 1, kind: .set("a", node(#"{"b":1,"c":2}"#)), visible: true))
        #expect(describe(set) == ["3 value 1", "1 child_added b 1", "1 child_added c after b 2"])
        #expect(describe(tree.applyServerOverwrite(at: "a/b", Node(1), tag: nil)).isEmpty)
        // Refused: a is incomplete again and shows what the server sent whole (b), not c.
        #expect(describe(tree.ackWrite(1, revert: true)) == ["2 child_removed c 2"])
    }

    @Test func aRevokedListenCancelsItsListenersAndForgetsTheView() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "s"), type: .value)
        _ = tree.addRegistration(2, spec: QuerySpec(path: "s"), type: .childAdded)
        let output = tree.listenFailed(ListenKey(path: "s", tag: nil), status: "permission_denied", reason: nil)
        #expect(output.cancelled.map(\.registration) == [1, 2])
        #expect(tree.viewCount == 0)
        #expect(tree.activeListens.isEmpty)
    }

    @Test func pendingWritesAreFoundByLocationWhateverTheirNumber() {
        var tree = SyncTree()
        _ = tree.addRegistration(1, spec: QuerySpec(path: "k500"), type: .value)
        for index in 0..<1_000 {
            _ = tree.applyUserWrite(PendingWrite(id: Int64(index), kind: .set(Path("k\(index)"), Node(Int64(index))), visible: true))
        }
        #expect(tree.visibleValue(at: "k500") == Node(Int64(500)))
        _ = tree.applyUserWrite(PendingWrite(id: 1_000, kind: .merge(.root, [(Path("k500"), Node("merged"))]), visible: true))
        #expect(tree.visibleValue(at: "k500") == Node("merged"))
        #expect(tree.visibleValue(at: "k500", excluding: [1_000]) == Node(Int64(500)))
        _ = tree.removeAllWrites()
        #expect(tree.visibleValue(at: "k500").isEmpty)
    }
}
