import HearthCore
import HearthTriggers

/// A hooks document as an admin deploys it (`PUT /.settings/hooks.json`, `hearth hooks deploy`): parsed and
/// checked by ``HooksDocument/init(json:)``. Properties: nothing crashes; a document that is accepted,
/// written back with its secrets, is accepted again as the same document; every accepted hook is within
/// the document's limits.
///
/// Input: the document's JSON.
enum HooksDocumentFuzzing {
    static let target = FuzzTarget(name: "hooks-document", input: "a webhooks document (JSON)", run: run)

    static func run(_ bytes: [UInt8]) {
        guard let document = try? HooksDocument(json: bytes) else { return }
        let again = try? HooksDocument(json: Array(document.json(revealingSecrets: true).utf8))
        fuzzCheck(again == document, "an accepted hooks document does not read back as itself")
        fuzzCheck(document.hooks.count <= HooksDocument.Limits.hooksMax, "more hooks than the limit were accepted")
        for hook in document.hooks {
            fuzzCheck((1...HooksDocument.Limits.attemptsMax).contains(hook.attempts), "attempts out of range were accepted")
            fuzzCheck(!hook.events.isEmpty, "a hook without events was accepted")
        }
    }
}

/// A change-feed entry as a consumer reads it (`/.feed.json`, a functions process over the network), and
/// the events a trigger derives from it (``FeedEntry``, ``FeedEntry/events(at:)``). Properties: nothing
/// crashes; every event is a real change (before and after differ) whose kind agrees with them and whose
/// location matches the pattern.
///
/// Input: a pattern, a newline, then one entry's JSON.
enum FeedEventFuzzing {
    static let target = FuzzTarget(name: "feed-event", input: "a trigger pattern, a newline, a feed entry (JSON)", run: run)

    static func run(_ bytes: [UInt8]) {
        let newline = bytes.firstIndex(of: 0x0A) ?? bytes.endIndex
        let pattern = (try? TriggerPattern(String(decoding: bytes[..<newline], as: UTF8.self))) ?? (try? TriggerPattern("/a/{b}"))
        guard let pattern, let entry = try? FeedEntry(json: Array(bytes[min(newline + 1, bytes.endIndex)...])) else { return }
        for event in entry.events(at: pattern) {
            fuzzCheck(event.before != event.after, "an event whose location did not change")
            switch event.kind {
            case .created: fuzzCheck(event.before.isEmpty && !event.after.isEmpty, "a created event with something before")
            case .deleted: fuzzCheck(!event.before.isEmpty && event.after.isEmpty, "a deleted event with something after")
            case .updated: fuzzCheck(!event.before.isEmpty && !event.after.isEmpty, "an updated event missing a side")
            }
            fuzzCheck(pattern.parameters(of: event.location) != nil, "an event at a location the pattern does not match")
        }
    }
}

/// A page of `/.feed.json` as `hearth restore` reads it from the server (``FeedEntry/page(json:)``),
/// then undone on empty data (``FeedRestore``). Properties: nothing crashes; an accepted page's entries
/// keep the page's order; undoing them on an empty tree either gives a tree or says which entry kept no
/// earlier values.
///
/// Input: the page's JSON.
enum FeedPageFuzzing {
    static let target = FuzzTarget(name: "feed-page", input: "a page of /.feed.json (JSON)", run: run)

    static func run(_ bytes: [UInt8]) {
        guard let page = try? FeedEntry.page(json: bytes) else { return }
        fuzzCheck(page.entries.count <= bytes.count, "more entries than bytes")
        do {
            _ = try FeedRestore.undo(page.entries[...], on: .empty)
        } catch {
            fuzzCheck(page.entries.contains { $0.beforeOmitted }, "a restore refused without an entry whose earlier values were left out")
        }
    }
}
