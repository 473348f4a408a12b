import HearthCore
import HearthStorage

/// A stored change-feed entry as the feed reader turns it into JSON (``ChangeFeedRecord/json(decoding:)``):
/// the bytes come from the namespace's file, which a damaged disk or another program may have changed.
/// Properties: nothing crashes; what decodes is one JSON object that parses; an entry encoded from the
/// input's own bytes (as a path and a value) decodes to JSON holding both.
///
/// Input: a stored entry (version byte 1, then the fields of ChangeFeedRecord+Encoding.swift).
enum FeedEntryFuzzing {
    static let target = FuzzTarget(name: "feed-entry", input: "a stored change-feed entry", run: run)

    static func run(_ bytes: [UInt8]) {
        if let json = bytes.withUnsafeBytes({ try? ChangeFeedRecord.json(decoding: $0) }) {
            let parsed = try? Node(json: String(decoding: json, as: UTF8.self))
            fuzzCheck(parsed != nil && json.first == UInt8(ascii: "{"), "a decoded entry is not a JSON object: \(String(decoding: json.prefix(200), as: UTF8.self))")
        }
        // The same bytes as a string value and as a key: the encoder's output always decodes.
        let text = String(decoding: bytes.prefix(256), as: UTF8.self)
        let note = ChangeFeedNote(time: Int64(bytes.count), path: Path([ChildKey(text.isEmpty ? "k" : text)]), data: .set(Node(text)),
                                  authType: .appUser, authId: text, channel: "rest")
        let record = ChangeFeedRecord(note: note, before: [ChangeFeedValue(path: note.path, value: Node(text))])
        let json = record.json(beforeBytesMax: bytes.count)
        fuzzCheck((try? Node(json: String(decoding: json, as: UTF8.self))) != nil, "an encoded entry's JSON does not parse")
    }
}
