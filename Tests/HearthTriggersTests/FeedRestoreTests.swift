import HearthCore
import HearthTriggers
import Testing

/// Rebuilding earlier data from the feed (``FeedRestore``) and reading `/.feed.json` pages.
struct FeedRestoreTests {
    static let page = #"""
        {"entries":[
         {"position":8192,"time":10,"type":"set","path":"/a","data":{"x":1},"authType":"admin","protocol":"rest","before":{"/a":null}},
         {"position":16384,"time":20,"type":"update","path":"/","data":{"a/x":2,"b":{".value":3,".priority":1}},"authType":"admin","protocol":"rest","before":{"/a/x":1,"/b":null}},
         {"position":24576,"time":30,"type":"set","path":"/a","data":null,"authType":"app_user","authId":"ada","protocol":"realtime","before":{"/a":{"x":2}}}],
         "next":24576,"trimmedThrough":0}
        """#

    @Test func aPageReadsAndEachMomentComesBack() throws {
        let (entries, trimmed) = try FeedEntry.page(json: Array(Self.page.utf8))
        #expect(entries.map(\.position) == [8192, 16384, 24576] && trimmed == 0)
        let now = try Node(json: #"{"b":{".value":3,".priority":1}}"#)
        func at(_ moment: FeedRestore.Moment) throws -> String {
            let first = FeedRestore.firstUndone(entries, at: moment) ?? entries.endIndex
            return try FeedRestore.undo(entries[first...], on: now).json(.export)
        }
        #expect(try at(.time(30)) == now.json(.export), "nothing after the last write")
        #expect(try at(.time(25)) == #"{"a":{"x":2},"b":{".value":3,".priority":1}}"#)
        #expect(try at(.beforePosition(16384)) == #"{"a":{"x":1}}"#, "priorities and all, as they were")
        #expect(try at(.time(9)) == "null")
    }

    @Test func anEntryWithoutItsEarlierValuesStopsTheRestore() throws {
        let page = #"{"entries":[{"position":8192,"time":1,"type":"set","path":"/a","data":1,"authType":"admin","protocol":"rest","before":null,"beforeOmitted":true}],"trimmedThrough":0}"#
        let (entries, _) = try FeedEntry.page(json: Array(page.utf8))
        #expect(throws: FeedRestore.Failure.self) { try FeedRestore.undo(entries[...], on: .empty) }
        #expect(throws: DataError.self) { try FeedEntry.page(json: Array(#"{"entries":[1,"#.utf8)) }
    }

    @Test func redoingFromAnEarlierStateReachesEachMomentAndRedoingTwiceChangesNothing() throws {
        let (entries, _) = try FeedEntry.page(json: Array(Self.page.utf8))
        func at(_ count: Int, from base: Node = .empty) throws -> String { try FeedRestore.redo(entries[..<count], on: base).json(.export) }
        #expect(try at(1) == #"{"a":{"x":1}}"#)
        #expect(try at(2) == #"{"a":{"x":2},"b":{".value":3,".priority":1}}"#)
        #expect(try at(3) == #"{"b":{".value":3,".priority":1}}"#)
        // A copy read while the second write went in already holds it: done again, the same result.
        let fuzzy = try Node(json: #"{"a":{"x":2},"b":{".value":3,".priority":1}}"#)
        #expect(try FeedRestore.redo(entries[1...], on: fuzzy).json(.export) == at(3))
        #expect(try FeedRestore.redo(entries[0...], on: fuzzy).json(.export) == at(3))
    }

    @Test func aServerValueTheFeedKeptUnresolvedIsResolvedAtTheEntrysTime() throws {
        let page = #"{"entries":[{"position":8192,"time":1796000000000,"type":"set","path":"/t","data":{".sv":"timestamp"},"authType":"admin","protocol":"rest","before":{"/t":null}},{"position":16384,"time":2,"type":"set","path":"/n","data":{".sv":{"increment":2}},"authType":"admin","protocol":"rest","before":{"/n":null}}],"trimmedThrough":0}"#
        let (entries, _) = try FeedEntry.page(json: Array(page.utf8))
        let base = try Node(json: #"{"n":40}"#)
        #expect(try FeedRestore.redo(entries[...], on: base).json() == #"{"n":42,"t":1796000000000}"#)
    }
}
