import Foundation
import HearthCore
import HearthSQLite
import HearthStorage
import Testing

/// The SQLite engine's change feed: entries in commit order with what they replaced, kept across a
/// restart, trimmed by retention with readers behind it told to resync, and emptied by an import.
struct ChangeFeedTests {
    private func note(_ path: String, data: Node) -> ChangeFeedNote {
        ChangeFeedNote(time: 1_000, path: Path(path), data: .set(data), authType: .appUser, authId: "ada", channel: "rest")
    }

    private func entries(_ page: ChangeFeedPage) throws -> [Node] {
        try page.entries.map { try Node(json: String(decoding: $0.json, as: UTF8.self)) }
    }

    @Test func entriesComeInCommitOrderWithWhatTheyReplacedAndSurviveARestart() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var engine = try SQLiteStorageEngine(directory: directory, namespace: "feed")
        var database = DurableDatabase(engine: engine, root: .empty)
        try await database.set("jokes/j1", to: Node(["text": Node("knock knock")]), feed: note("jokes/j1", data: Node(["text": Node("knock knock")])))
        try await database.update("jokes", with: [(Path("j1/votes"), Node(3)), (Path("j2"), .empty)],
                                  feed: ChangeFeedNote(time: 1_000, path: "jokes", data: .update([.init(path: "j1/votes", value: Node(3)), .init(path: "j2", value: .empty)]),
                                                     authType: .appUser, authId: "ada", channel: "rest"))
        try await database.set("jokes/j1", to: .empty, feed: note("jokes/j1", data: .empty))
        try await database.set("untracked", to: Node(1))  // no note: not in the feed

        let page = try await engine.readFeed(after: 0, limit: 100)
        #expect(page.entries.count == 3 && page.trimmedThrough == 0)
        #expect(page.entries.map(\.position) == page.entries.map(\.position).sorted())
        let read = try entries(page)
        #expect(read[0].child(at: "type") == Node("set") && read[0].child(at: "path") == Node("/jokes/j1"))
        #expect(read[0].child(at: "authId") == Node("ada") && read[0].child(at: "protocol") == Node("rest"))
        // An update's data maps relative paths; `before` maps the absolute locations it changed.
        #expect(String(decoding: page.entries[1].json, as: UTF8.self).contains(#""data":{"j1/votes":3,"j2":null}"#))
        #expect(String(decoding: page.entries[1].json, as: UTF8.self).contains(#""before":{"/jokes/j1/votes":null,"/jokes/j2":null}"#))
        #expect(String(decoding: page.entries[2].json, as: UTF8.self).contains(#""data":null"#))
        #expect(String(decoding: page.entries[2].json, as: UTF8.self).contains(#""before":{"/jokes/j1":{"text":"knock knock","votes":3}}"#))

        let rest = try await engine.readFeed(after: page.entries[0].position, limit: 1)
        #expect(rest.entries == [page.entries[1]])
        // Entries by position (a history's candidates, newest first) come in position order.
        let picked = try await engine.readFeed(at: [page.entries[2].position, page.entries[0].position])
        #expect(picked.entries == [page.entries[0], page.entries[2]])

        engine.close()
        engine = try SQLiteStorageEngine(directory: directory, namespace: "feed")
        database = DurableDatabase(engine: engine, root: try engine.load(progress: nil))
        try await database.set("after", to: Node(true), feed: note("after", data: Node(true)))
        let reopened = try await engine.readFeed(after: 0, limit: 100)
        #expect(Array(reopened.entries.prefix(3)) == page.entries)
        #expect(reopened.entries.count == 4 && reopened.entries[3].position > page.entries[2].position)
        engine.close()
    }

    @Test func retentionTrimsTheOldestAndReadersBehindItAreToldToResync() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Each entry is ~150 bytes: a 1,000-byte feed keeps the last few.
        let retention = ChangeFeedRetention(maxAgeMilliseconds: 3_600_000, maxBytes: 1_000)
        let engine = try SQLiteStorageEngine(directory: directory, namespace: "trim", feedRetention: retention)
        let database = DurableDatabase(engine: engine, root: .empty)
        for index in 0..<40 {
            try await database.set(Path("items/i\(index)"), to: Node(index), feed: note("items/i\(index)", data: Node(index)))
        }
        let page = try await engine.readFeed(after: 0, limit: 100)
        #expect(page.trimmedThrough > 0 && page.entries.count < 40 && page.entries.count >= 4)
        #expect(page.entries.allSatisfy { $0.position > page.trimmedThrough })
        #expect(page.needsResync(after: 0))
        #expect(!page.needsResync(after: page.trimmedThrough), "a reader that saw the last trimmed entry missed nothing")
        let last = try #require(try entries(page).last)
        #expect(last.child(at: "data") == Node(39))
        engine.close()
    }

    @Test func oldEntriesGoByAge() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Nothing may be older than 0 ms: each commit's age check (the first one runs at once) trims all
        // rows older than itself.
        let retention = ChangeFeedRetention(maxAgeMilliseconds: -1, maxBytes: 1 << 30)
        let engine = try SQLiteStorageEngine(directory: directory, namespace: "age", feedRetention: retention)
        let database = DurableDatabase(engine: engine, root: .empty)
        try await database.set("a", to: Node(1), feed: note("a", data: Node(1)))
        let page = try await engine.readFeed(after: 0, limit: 100)
        #expect(page.entries.isEmpty && page.trimmedThrough > 0)
        engine.close()
    }

    @Test func anImportEmptiesTheFeedAndEveryReaderResyncs() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = try SQLiteStorageEngine(directory: directory, namespace: "import")
        let database = DurableDatabase(engine: engine, root: .empty)
        try await database.set("a", to: Node(1), feed: note("a", data: Node(1)))
        let before = try await engine.readFeed(after: 0, limit: 10)
        try engine.replaceAll(with: Node(["b": Node(2)]), progress: nil)
        let after = try await engine.readFeed(after: 0, limit: 10)
        #expect(after.entries.isEmpty)
        #expect(after.needsResync(after: try #require(before.entries.last).position))
        engine.close()
    }

    @Test func theEarlierValuesOfALargeWriteAreLeftOut() {
        let big = Node(String(repeating: "x", count: 2_000))
        let record = ChangeFeedRecord(note: note("doc", data: .empty), before: [ChangeFeedValue(path: "doc", value: big)])
        let small = String(decoding: record.json(beforeBytesMax: 10_000), as: UTF8.self)
        let omitted = String(decoding: record.json(beforeBytesMax: 1_000), as: UTF8.self)
        #expect(small.contains(#""before":{"/doc":"xxx"#) && !small.contains("beforeOmitted"))
        #expect(omitted.hasSuffix(#","before":null,"beforeOmitted":true}"#))
    }
}
