import HearthCore
import HearthStorage
import Testing
@testable import HearthTriggers

/// Feed entries read back and the events a trigger sees in them (docs/functions.md, "What an event is").
struct TriggerEventTests {
    let jokes = try! TriggerPattern("/jokes/{jokeId}")

    /// An entry as the server serves it: the stored record's JSON with its position, from the real encoder.
    func entry(_ note: ChangeFeedNote, before: [(String, String)], position: Int64 = 16384) throws -> FeedEntry {
        let record = ChangeFeedRecord(note: note, before: try before.map { ChangeFeedValue(path: Path($0.0), value: try Node(json: $0.1)) })
        var served: [UInt8] = []
        ChangeFeedPage.Entry(position: position, json: record.json(beforeBytesMax: 1 << 20)).appendServed(to: &served)
        return try FeedEntry(json: served)
    }

    func note(_ path: String, _ data: ChangeFeedNote.Data) -> ChangeFeedNote {
        ChangeFeedNote(time: 1_796_477_209_243, path: Path(path), data: data, authType: .appUser, authId: "ada", channel: "realtime")
    }

    @Test func aSetOfANewLocationIsCreated() throws {
        let feed = try entry(note("jokes/j1", .set(try Node(json: #"{"text":"hi","votes":0}"#))), before: [("jokes/j1", "null")])
        let events = feed.events(at: jokes)
        #expect(events.count == 1)
        #expect(events.first?.kind == .created)
        #expect(events.first?.parameters == ["jokeId": "j1"])
        #expect(events.first?.after == (try Node(json: #"{"text":"hi","votes":0}"#)))
        #expect(events.first?.id == "16384-0")
        #expect(events.first?.authId == "ada")
    }

    @Test func aWriteBelowTheLocationSeesTheWholeLocationThroughItsContext() throws {
        // The server recorded /jokes/j1 itself (a trigger watched it), besides the changed /jokes/j1/votes.
        let feed = try entry(
            note("jokes/j1/votes", .set(Node(2))),
            before: [("jokes/j1", #"{"text":"hi","votes":1}"#), ("jokes/j1/votes", "1")])
        let event = try #require(feed.events(at: jokes).first)
        #expect(event.kind == .updated)
        #expect(event.before == (try Node(json: #"{"text":"hi","votes":1}"#)))
        #expect(event.after == (try Node(json: #"{"text":"hi","votes":2}"#)))
    }

    @Test func anUpdatesNullIsARemovalThatMakesADeletedEvent() throws {
        let values = [ChangeFeedValue(path: Path("j1/votes"), value: Node(2)), ChangeFeedValue(path: Path("j2"), value: .empty)]
        let feed = try entry(
            note("jokes", .update(values)),
            before: [("jokes/j1", #"{"votes":1}"#), ("jokes/j1/votes", "1"), ("jokes/j2", #"{"text":"old"}"#)])
        let events = feed.events(at: jokes)
        #expect(events.map(\.kind) == [.updated, .deleted])
        #expect(events.map(\.location) == [Path("jokes/j1"), Path("jokes/j2")])
        #expect(events.map(\.id) == ["16384-0", "16384-1"])
        #expect(events[1].after.isEmpty)
    }

    @Test func aSetAboveThePatternMakesAnEventPerChangedChild() throws {
        let feed = try entry(
            note("jokes", .set(try Node(json: #"{"j2":"b2","j3":"c","j4":"same"}"#))),
            before: [("jokes", #"{"j1":"a","j2":"b","j4":"same"}"#)])
        let events = feed.events(at: jokes)
        #expect(events.map(\.location) == [Path("jokes/j1"), Path("jokes/j2"), Path("jokes/j3")])
        #expect(events.map(\.kind) == [.deleted, .updated, .created])
    }

    @Test func writesElsewhereMakeNoEvents() throws {
        let feed = try entry(note("users/ada", .set(Node("x"))), before: [("users/ada", "null")])
        #expect(feed.events(at: jokes).isEmpty)
        let deeper = try TriggerPattern("/jokes/{jokeId}/votes/{uid}")
        let unchanged = try entry(note("jokes/j1/text", .set(Node("x"))), before: [("jokes/j1/text", "null")])
        #expect(unchanged.events(at: deeper).isEmpty)
    }

    @Test func patternsAreCheckedWithAMessageThatSaysWhatToChange() throws {
        #expect(try TriggerPattern("jokes/{jokeId}/votes").description == "/jokes/{jokeId}/votes")
        for bad in ["/", "/jokes/{}", "/jokes/{a}/{a}", "/jokes/*", "/jokes/a{b}", "/jo.kes/{x}", "/jokes/{1x}"] {
            #expect(throws: TriggerError.self, "\(bad)") { try TriggerPattern(bad) }
        }
    }

    @Test func theServerRecordsTheLocationsAboveAWriteThatAPatternWatches() throws {
        let patterns = TriggerPatterns([jokes, try TriggerPattern("/jokes/{jokeId}/votes/{uid}")])
        #expect(patterns.contexts(of: [Path("jokes/j1/votes/ada/x")]) == [Path("jokes/j1")])
        #expect(patterns.contexts(of: [Path("jokes/j1")]).isEmpty)
        #expect(patterns.contexts(of: [Path("users/ada/name")]).isEmpty)
    }

    @Test func aMalformedEntryIsRefusedNotCrashedOn() {
        for bad in ["", "{", #"{"position":1}"#, #"{"position":"x","time":1,"type":"set","path":"/a","data":1}"#, "[1]", #"{"a":}"#] {
            #expect(throws: DataError.self, "\(bad)") { try FeedEntry(json: Array(bad.utf8)) }
        }
    }
}

/// The hooks document (`PUT /.settings/hooks.json`), a delivery's body and signature, and retry waits.
struct HooksDocumentTests {
    @Test func aDocumentIsReadAndItsSecretsHiddenWhenShown() throws {
        let json = #"{"hooks":{"countVotes":{"path":"/jokes/{jokeId}","events":["created","updated"],"url":"https://example.com/h","secret":"0123456789abcdef","attempts":3}}}"#
        let document = try HooksDocument(json: Array(json.utf8))
        let hook = try #require(document.hooks.first)
        #expect(hook.name == "countVotes" && hook.events == [.created, .updated] && hook.attempts == 3 && hook.timeoutSeconds == 10)
        let shown = document.json(revealingSecrets: false)
        #expect(!shown.contains("0123456789abcdef") && shown.contains(HooksDocument.redactedSecret))
        #expect(try HooksDocument(json: Array(document.json(revealingSecrets: true).utf8)) == document)
    }

    /// Found by the fuzzer: hooks named 0, 1, … were written as a JSON array, which did not read back.
    @Test func hooksNamedByIndicesStayAnObject() throws {
        let json = #"{"hooks":{"1":{"path":"/a/{b}","events":["deleted"],"url":"https://h","secret":"0123456789abcdef"}}}"#
        let document = try HooksDocument(json: Array(json.utf8))
        let written = document.json(revealingSecrets: true)
        #expect(written.hasPrefix(#"{"hooks":{"1":{"#) && written.contains(#""events":["deleted"]"#))
        #expect(try HooksDocument(json: Array(written.utf8)) == document)
        #expect(HooksDocument().json(revealingSecrets: false) == #"{"hooks":{}}"#)
    }

    @Test(arguments: [
        #"[]"#, #"{"hookz":{}}"#, #"{"hooks":{"a b":{}}}"#,
        #"{"hooks":{"h":{"path":"/","events":["created"],"url":"https://x","secret":"0123456789abcdef"}}}"#,
        #"{"hooks":{"h":{"path":"/a","events":["made"],"url":"https://x","secret":"0123456789abcdef"}}}"#,
        #"{"hooks":{"h":{"path":"/a","events":["created"],"url":"ftp://x","secret":"0123456789abcdef"}}}"#,
        #"{"hooks":{"h":{"path":"/a","events":["created"],"url":"https://x","secret":"short"}}}"#,
        #"{"hooks":{"h":{"path":"/a","events":["created"],"url":"https://x","secret":"0123456789abcdef","attempts":0}}}"#,
        #"{"hooks":{"h":{"path":"/a","events":["created"],"url":"https://x","secret":"0123456789abcdef","retries":1}}}"#,
    ])
    func aBadDocumentIsRefusedWithAReason(_ json: String) {
        #expect(throws: TriggerError.self) { try HooksDocument(json: Array(json.utf8)) }
    }

    @Test func aDeliveryIsSignedOverItsTimeAndBody() throws {
        let event = TriggerEvent(
            id: "8192-0", position: 8192, kind: .created, location: Path("jokes/j1"), parameters: ["jokeId": "j1"], before: .empty,
            after: Node("hi"), beforeOmitted: false, time: 5, authType: "admin", authId: nil, channel: "rest")
        let body = HookDelivery.body(of: event, hook: "h", namespace: "demo")
        #expect(String(decoding: body, as: UTF8.self).contains(#""before":null,"after":"hi""#))
        var signed: [UInt8] = []
        let header = HookDelivery.signature(body: body, secret: "k", unixSeconds: 42) { key, message in
            signed = message
            return key + [0xAB]
        }
        #expect(header == "t=42,v1=6bab")
        #expect(signed == Array("42.".utf8) + body)
    }

    @Test func retriesWaitLongerEachTimeUpToTheCapWithJitter() {
        let schedule = RetrySchedule(firstMilliseconds: 500, capMilliseconds: 30_000)
        #expect(schedule.delay(afterFailures: 1, random: 0) == 250)
        #expect(schedule.delay(afterFailures: 1, random: 1) == 500)
        #expect(schedule.delay(afterFailures: 4, random: 0.999_999) <= 4000)
        #expect(schedule.delay(afterFailures: 40, random: 1) == 30_000)
    }
}
