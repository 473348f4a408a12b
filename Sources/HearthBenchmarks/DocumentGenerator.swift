import HearthSupport
/// Generates a realistic Firebase Realtime Database export: the JSON document that parse, serialize and
/// memory scenarios run on.
///
/// The tree is a small social app with the shapes Firebase guides recommend (flat, denormalized, keyed by
/// auth uid and push id):
///
/// ```
/// users/{uid}              {name, email, emailVerified, createdAt, bio}
/// usernames/{username}     uid
/// jokes/{push id}          {text, author, createdAt, votes, rating, voters: {uid: true}}
/// followers/{uid}/{uid}    true
/// messages/{uid}/{push id} {text, from, timestamp}
/// ```
///
/// uids are 28 characters of [0-9A-Za-z], like Firebase Auth's; push ids are 20 characters, 8 encoding the
/// creation time in milliseconds and 12 random, in the alphabet of the Firebase SDKs' `childByAutoId`, so they
/// sort by time. Texts mix words, punctuation, quotes and newlines (escaped) and some non-ASCII characters.
///
/// The same seed and size give the same bytes on every machine and toolchain: the generator uses its own
/// PRNG and never the standard library's random APIs, whose algorithms may change.
///
/// ```swift
/// let document = DocumentGenerator(seed: 42).generate(byteCount: 1_000_000)  // [UInt8], at most 1 MB
/// ```
struct DocumentGenerator {
    /// 25 MB (25,000,000 bytes): the size of a busy app's database, and large enough that a parser's
    /// per-byte cost dominates its fixed costs.
    static let defaultByteCount = 25_000_000
    static let defaultSeed: UInt64 = 2024
    /// Below this the sections are too small to hold the app's shapes.
    static let minimumByteCount = 4096

    /// Share of the document each section fills before the next starts; `messages` fills the rest.
    private static let sectionEnds = (users: 0.14, jokes: 0.62, followers: 0.75)

    let seed: UInt64

    init(seed: UInt64 = defaultSeed) {
        self.seed = seed
    }

    /// Returns a JSON object of at most `byteCount` bytes, and within one message's size (a few hundred
    /// bytes) of it.
    func generate(byteCount: Int = defaultByteCount) -> [UInt8] {
        precondition(byteCount >= Self.minimumByteCount, "documents under \(Self.minimumByteCount) bytes are not realistic")
        var writer = DocumentWriter(seed: seed, byteCount: byteCount)
        writer.write(sectionEnds: Self.sectionEnds)
        return writer.output
    }
}

/// The generation state: output bytes, the PRNG, the users made so far and the clock of push ids.
private struct DocumentWriter {
    var output: [UInt8] = []
    var random: SplitMix64
    let byteCount: Int
    var users: [(uid: [UInt8], first: Int, last: Int)] = []
    /// Milliseconds since 1970 of the last push id; strictly increasing, so push ids never repeat.
    var pushClock: Int64 = 1_600_000_000_000

    init(seed: UInt64, byteCount: Int) {
        random = SplitMix64(seed: seed)
        self.byteCount = byteCount
        output.reserveCapacity(byteCount)
    }

    mutating func write(sectionEnds: (users: Double, jokes: Double, followers: Double)) {
        appendASCII("{\"users\":{")
        var index = 0
        repeat {
            let entry = userEntry(index: index)
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: entry)
            index += 1
        } while output.count < Int(Double(byteCount) * sectionEnds.users)

        appendASCII("},\"usernames\":{")
        for (index, user) in users.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            appendQuoted(username(of: index))
            output.append(UInt8(ascii: ":"))
            appendQuoted(user.uid)
        }

        appendASCII("},\"jokes\":{")
        appendEntries(until: Int(Double(byteCount) * sectionEnds.jokes)) { $0.jokeEntry() }
        appendASCII("},\"followers\":{")
        var followed = 0
        appendEntries(until: Int(Double(byteCount) * sectionEnds.followers)) { writer in
            guard followed < writer.users.count else { return nil }
            defer { followed += 1 }
            return writer.followersEntry(of: followed)
        }
        appendASCII("},\"messages\":{")
        appendConversations(until: byteCount - 2)
        appendASCII("}}")
    }

    /// Appends comma-separated entries while they fit before `end`; stops at the first that does not, or
    /// when `makeEntry` has no more.
    mutating func appendEntries(until end: Int, _ makeEntry: (inout DocumentWriter) -> [UInt8]?) {
        var first = true
        while let entry = makeEntry(&self) {
            guard output.count + entry.count + 1 <= end else { return }
            if !first { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: entry)
            first = false
        }
    }

    /// `messages/{uid}/{push id}`: one conversation per user, messages added one by one so that the last
    /// conversation is cut to fit and the document ends within one message of `end`.
    mutating func appendConversations(until end: Int) {
        for conversation in users.indices {
            let mark = output.count
            if conversation > 0 { output.append(UInt8(ascii: ",")) }
            appendQuoted(users[conversation].uid)
            appendASCII(":{")
            let messageCount = 1 + random.next(below: 60)
            var written = 0
            while written < messageCount {
                let message = messageEntry(to: conversation)
                // The message, a comma, and "}" to close the conversation must fit.
                guard output.count + message.count + 2 <= end else { break }
                if written > 0 { output.append(UInt8(ascii: ",")) }
                output.append(contentsOf: message)
                written += 1
            }
            if written == 0 {
                output.removeSubrange(mark...)
                return
            }
            output.append(UInt8(ascii: "}"))
            if written < messageCount { return }
        }
    }

    // MARK: Entries

    mutating func userEntry(index: Int) -> [UInt8] {
        let uid = randomCharacters(28, from: Alphabet.uid)
        let first = random.next(below: Words.firstNames.count)
        let last = random.next(below: Words.lastNames.count)
        users.append((uid, first, last))
        let start = output.count
        appendQuoted(uid)
        appendASCII(":{\"bio\":")
        appendQuoted(sentence(characters: random.next(below: 160)))
        appendASCII(",\"createdAt\":")
        appendInteger(1_500_000_000_000 + Int64(random.next(below: 250_000_000_000)))
        appendASCII(",\"email\":")
        appendQuoted(Words.asciiFolded("\(Words.firstNames[first]).\(Words.lastNames[last])\(index)@example.com"))
        appendASCII(",\"emailVerified\":")
        appendASCII(random.next(below: 4) == 0 ? "false" : "true")
        appendASCII(",\"name\":")
        appendQuoted(Array("\(Words.firstNames[first]) \(Words.lastNames[last])".utf8))
        appendASCII("}")
        return cut(from: start)
    }

    func username(of index: Int) -> [UInt8] {
        // Firebase keys cannot contain '.', '$', '#', '[', ']' or '/': use '_'.
        let user = users[index]
        return Array("\(Words.firstNames[user.first])_\(Words.lastNames[user.last])_\(index)".lowercased().utf8)
    }

    mutating func jokeEntry() -> [UInt8]? {
        let pushID = nextPushID()
        let createdAt = pushClock
        let voterCount = random.next(below: 41)
        let start = output.count
        appendQuoted(pushID)
        appendASCII(":{\"author\":")
        appendQuoted(randomUser().uid)
        appendASCII(",\"createdAt\":")
        appendInteger(createdAt)
        appendASCII(",\"rating\":")
        appendASCII("\(1 + random.next(below: 4)).\(random.next(below: 10))")
        appendASCII(",\"text\":")
        appendQuoted(sentence(characters: 60 + random.next(below: 141)))
        appendASCII(",\"voters\":{")
        for (index, voter) in distinctUsers(count: voterCount).enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            appendQuoted(users[voter].uid)
            appendASCII(":true")
        }
        appendASCII("},\"votes\":")
        appendInteger(Int64(min(voterCount, users.count)))
        appendASCII("}")
        return cut(from: start)
    }

    mutating func followersEntry(of user: Int) -> [UInt8] {
        let start = output.count
        appendQuoted(users[user].uid)
        appendASCII(":{")
        for (index, follower) in distinctUsers(count: 1 + random.next(below: 60)).enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            appendQuoted(users[follower].uid)
            appendASCII(":true")
        }
        appendASCII("}")
        return cut(from: start)
    }

    mutating func messageEntry(to conversation: Int) -> [UInt8] {
        let pushID = nextPushID()
        let start = output.count
        appendQuoted(pushID)
        appendASCII(":{\"from\":")
        appendQuoted(randomUser().uid)
        appendASCII(",\"text\":")
        appendQuoted(sentence(characters: 2 + random.next(below: 300)))
        appendASCII(",\"timestamp\":")
        appendInteger(pushClock)
        appendASCII("}")
        return cut(from: start)
    }

    /// Removes and returns what was written since `start`: entries are built in place, then cut out so
    /// that the caller can decide whether they fit.
    mutating func cut(from start: Int) -> [UInt8] {
        defer { output.removeSubrange(start...) }
        return Array(output[start...])
    }

    // MARK: Values

    mutating func randomUser() -> (uid: [UInt8], first: Int, last: Int) {
        users[random.next(below: users.count)]
    }

    /// Up to `count` different user indices, so that no object gets the same key twice.
    mutating func distinctUsers(count: Int) -> [Int] {
        let count = min(count, users.count)
        var chosen = Set<Int>()
        var order: [Int] = []
        while order.count < count {
            let index = random.next(below: users.count)
            if chosen.insert(index).inserted { order.append(index) }
        }
        return order
    }

    /// A push id as the Firebase SDKs make it: 8 characters of time, most significant first, then 12 random.
    mutating func nextPushID() -> [UInt8] {
        pushClock += 1 + Int64(random.next(below: 90_000))
        var id = [UInt8](repeating: 0, count: 8)
        var time = pushClock
        for position in stride(from: 7, through: 0, by: -1) {
            id[position] = Alphabet.pushID[Int(time % 64)]
            time /= 64
        }
        return id + randomCharacters(12, from: Alphabet.pushID)
    }

    mutating func randomCharacters(_ count: Int, from alphabet: [UInt8]) -> [UInt8] {
        (0..<count).map { _ in alphabet[random.next(below: alphabet.count)] }
    }

    /// Text of about `characters` characters: words with now and then punctuation, a quote, a newline, an
    /// accented word or an emoji, as people type them.
    mutating func sentence(characters: Int) -> [UInt8] {
        var text: [UInt8] = []
        var capitalize = true
        while text.count < characters {
            if let previous = text.last, previous != UInt8(ascii: "\n") { text.append(UInt8(ascii: " ")) }
            var word: [UInt8]
            switch random.next(below: 100) {
            case 0: word = Array("\"really\"".utf8)
            case 1: word = Array("café".utf8)
            case 2: word = Array("naïve".utf8)
            case 3: word = Array("🔥".utf8)
            case 4: word = Array("😂".utf8)
            case 5: word = Array("\\o/".utf8)
            default: word = Array(Words.common[random.next(below: Words.common.count)].utf8)
            }
            if capitalize, let first = word.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z") {
                word[0] = first - 32
            }
            capitalize = false
            text.append(contentsOf: word)
            switch random.next(below: 40) {
            case 0, 1, 2:
                text.append(UInt8(ascii: "."))
                capitalize = true
            case 3: text.append(UInt8(ascii: ","))
            case 4: text.append(UInt8(ascii: "?"))
                capitalize = true
            case 5:
                text.append(UInt8(ascii: "\n"))
                capitalize = true
            default: break
            }
        }
        return text
    }

    // MARK: JSON output

    mutating func appendASCII(_ text: StaticString) {
        text.withUTF8Buffer { output.append(contentsOf: $0) }
    }

    mutating func appendASCII(_ text: String) {
        output.append(contentsOf: text.utf8)
    }

    mutating func appendInteger(_ value: Int64) {
        output.append(contentsOf: String(value).utf8)
    }

    /// Appends `bytes` (UTF-8) as a JSON string, escaping what RFC 8259 section 7 requires.
    mutating func appendQuoted(_ bytes: [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0..<0x20: output.append(contentsOf: Array("\\u00".utf8) + Alphabet.hex(byte))
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

private enum Alphabet {
    static let uid = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    /// The push id alphabet of the Firebase SDKs, in ASCII order so that ids sort by time.
    static let pushID = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)
    static func hex(_ byte: UInt8) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
    }
}

private enum Words {
    static let firstNames = [
        "Ada", "Alan", "Amara", "Ana", "Björn", "Chen", "Chloé", "Dmitri", "Elena", "Emeka", "Fatima", "Grace",
        "Hiro", "Ines", "Ivan", "Jamal", "Jana", "Kofi", "Lars", "Leila", "Lucas", "Maya", "Mei", "Nadia",
        "Noah", "Olga", "Omar", "Priya", "Rafael", "Sara", "Sven", "Tariq", "Uma", "Yuki", "Zoë",
    ]
    static let lastNames = [
        "Abara", "Bauer", "Costa", "Dubois", "Eriksen", "Fernández", "García", "Haddad", "Ito", "Jensen",
        "Kowalski", "Li", "Müller", "Nakamura", "Okafor", "Patel", "Quinn", "Rossi", "Silva", "Tanaka",
        "Usman", "Volkov", "Wang", "Xu", "Yilmaz", "Zhang",
    ]
    /// `name` in lower-case ASCII, as people type it in an email address: "Zoë" becomes "zoe".
    static func asciiFolded(_ name: String) -> [UInt8] {
        let folds: [Character: Character] = ["á": "a", "é": "e", "ë": "e", "í": "i", "ï": "i", "ö": "o", "ü": "u"]
        return Array(String(name.lowercased().map { folds[$0] ?? $0 }).utf8)
    }

    static let common = [
        "the", "a", "and", "to", "of", "I", "you", "it", "that", "is", "was", "for", "on", "my", "with", "why",
        "did", "chicken", "cross", "road", "because", "programmer", "bug", "coffee", "database", "server",
        "deploy", "friday", "cat", "dog", "walks", "into", "bar", "says", "never", "always", "knock", "who",
        "there", "pun", "intended", "laugh", "joke", "funny", "tomorrow", "yesterday", "meeting", "lunch",
        "see", "later", "thanks", "okay", "sure", "what", "time", "tonight", "weekend", "movie", "great",
        "idea", "sounds", "good", "let", "me", "know", "when", "arrive", "home", "train", "late", "again",
    ]
}
