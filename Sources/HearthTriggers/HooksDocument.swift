import HearthCore

/// A namespace's webhooks as deployed (`PUT /.settings/hooks.json`, `hearth hooks deploy`; docs/functions.md):
///
///     {"hooks": {"countVotes": {"path": "/jokes/{jokeId}", "events": ["created", "updated"],
///                               "url": "https://example.com/hearth", "secret": "at least 16 characters"}}}
///
/// Optional per hook: `attempts` (deliveries tried before the event is parked as a dead letter, 1–100,
/// default 12: at least 90 s of retries, RetrySchedule) and `timeoutSeconds` (how long one delivery may take, 1–30, default 10).
public struct HooksDocument: Sendable, Equatable {
    public var hooks: [HookDefinition]

    public init(hooks: [HookDefinition] = []) { self.hooks = hooks }

    /// Limits of a document (one place: the server refuses beyond them with the message below).
    public enum Limits {
        public static let bytesMax = 64 << 10
        public static let hooksMax = 50
        public static let nameBytesMax = 64
        public static let urlBytesMax = 2048
        public static let secretBytesMin = 16
        public static let secretBytesMax = 256
        public static let attemptsMax = 100
        public static let attemptsDefault = 12
        public static let timeoutSecondsMax = 30
        public static let timeoutSecondsDefault = 10
    }

    /// Parses and checks a document; the error says which hook and field is wrong and how.
    public init(json bytes: [UInt8]) throws(TriggerError) {
        guard bytes.count <= Limits.bytesMax else { throw TriggerError("the hooks document is larger than \(Limits.bytesMax) bytes") }
        // Read member by member, not as one Node: a Node drops empty objects and nulls, and a hook
        // written as {} must be refused by name, not ignored.
        do {
            var hooksRange: Range<Int>?
            for member in try JSONMembers(bytes, in: bytes.indices) {
                guard member.key == "hooks" else {
                    throw TriggerError("unknown field \"\(member.key)\" in the hooks document: it has one field, \"hooks\"")
                }
                hooksRange = member.value
            }
            var parsed: [HookDefinition] = []
            if let hooksRange, !JSONMembers.isNull(bytes, hooksRange) {
                let members = Array(try JSONMembers(bytes, in: hooksRange))
                guard members.count <= Limits.hooksMax else { throw TriggerError("more than \(Limits.hooksMax) hooks in one namespace") }
                for member in members {
                    guard !parsed.contains(where: { $0.name == member.key }) else { throw TriggerError("hook \"\(member.key)\" is named twice") }
                    parsed.append(try HookDefinition(name: member.key, try Node(jsonBytes: Array(bytes[member.value]))))
                }
            }
            // In key order, as the document is written back: one document, one order.
            self.hooks = parsed.sorted { ChildKey($0.name) < ChildKey($1.name) }
        } catch let error as TriggerError {
            throw error
        } catch {
            throw TriggerError(#"the hooks document is not {"hooks": {"NAME": {…}}}: \#(error)"#)
        }
    }

    /// The document as JSON, secrets replaced by `redactedSecret` (what GET answers) or kept.
    public func json(revealingSecrets: Bool) -> String {
        var hooks = Node.empty
        for hook in self.hooks { hooks.setChild(ChildKey(hook.name), to: hook.node(revealingSecret: revealingSecrets)) }
        // The outer object by hand: no hooks is still an object (an empty Node writes as null), and hooks
        // named 0, 1, … stay an object (a Node of index keys writes as an array). Each hook as a Node:
        // its events are a list.
        let members = hooks.children.map { name, hook in Node(name.string).json() + ":" + hook.json() }
        return "{\"hooks\":{" + members.joined(separator: ",") + "}}"
    }

    public static let redactedSecret = "(hidden)"

    public var patterns: TriggerPatterns { TriggerPatterns(hooks.map(\.pattern)) }
}

/// One webhook: which events at which locations it receives, where, and the secret that signs them.
public struct HookDefinition: Sendable, Equatable {
    public var name: String
    public var pattern: TriggerPattern
    public var events: Set<TriggerEvent.Kind>
    public var url: String
    public var secret: String
    public var attempts: Int
    public var timeoutSeconds: Int

    public init(
        name: String, pattern: TriggerPattern, events: Set<TriggerEvent.Kind>, url: String, secret: String,
        attempts: Int = HooksDocument.Limits.attemptsDefault, timeoutSeconds: Int = HooksDocument.Limits.timeoutSecondsDefault
    ) {
        self.name = name
        self.pattern = pattern
        self.events = events
        self.url = url
        self.secret = secret
        self.attempts = attempts
        self.timeoutSeconds = timeoutSeconds
    }

    init(name: String, _ node: Node) throws(TriggerError) {
        typealias Limits = HooksDocument.Limits
        guard !name.isEmpty, name.utf8.count <= Limits.nameBytesMax,
            name.unicodeScalars.allSatisfy({ $0 == "_" || $0 == "-" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) })
        else { throw TriggerError("the hook name \"\(name)\" is not 1–\(Limits.nameBytesMax) letters, digits, - or _") }
        self.name = name
        guard node.hasChildren else { throw TriggerError("hook \"\(name)\" is an object with path, events, url and secret") }
        let known: Set<String> = ["path", "events", "url", "secret", "attempts", "timeoutSeconds"]
        for (key, _) in node.children where !known.contains(key.string) {
            throw TriggerError("hook \"\(name)\": unknown field \"\(key.string)\" (known: path, events, url, secret, attempts, timeoutSeconds)")
        }
        guard let path = node.child("path").stringValue else { throw TriggerError("hook \"\(name)\": \"path\" is a pattern such as \"/jokes/{jokeId}\"") }
        do { pattern = try TriggerPattern(path) } catch { throw TriggerError("hook \"\(name)\": \(error.message)") }
        let events = node.child("events")
        guard events.hasChildren else {
            throw TriggerError("hook \"\(name)\": \"events\" is a list of created, updated, deleted or written")
        }
        var kinds = Set<TriggerEvent.Kind>()
        for (_, event) in events.children {
            switch event.stringValue {
            case "written"?: kinds.formUnion(TriggerEvent.Kind.allCases)
            case let text? where TriggerEvent.Kind(rawValue: text) != nil: kinds.insert(TriggerEvent.Kind(rawValue: text)!)
            default: throw TriggerError("hook \"\(name)\": \(event.json()) is not an event (created, updated, deleted or written)")
            }
        }
        self.events = kinds
        guard let url = node.child("url").stringValue, url.utf8.count <= Limits.urlBytesMax,
            url.hasPrefix("https://") || url.hasPrefix("http://")
        else { throw TriggerError("hook \"\(name)\": \"url\" is an https:// URL of at most \(Limits.urlBytesMax) bytes") }
        self.url = url
        guard let secret = node.child("secret").stringValue, (Limits.secretBytesMin...Limits.secretBytesMax).contains(secret.utf8.count) else {
            throw TriggerError("hook \"\(name)\": \"secret\" is a string of \(Limits.secretBytesMin)–\(Limits.secretBytesMax) bytes that signs each delivery")
        }
        self.secret = secret
        attempts = try Self.number(node.child("attempts"), "attempts", of: name, in: 1...Limits.attemptsMax) ?? Limits.attemptsDefault
        timeoutSeconds = try Self.number(node.child("timeoutSeconds"), "timeoutSeconds", of: name, in: 1...Limits.timeoutSecondsMax)
            ?? Limits.timeoutSecondsDefault
    }

    private static func number(_ node: Node, _ field: String, of name: String, in range: ClosedRange<Int>) throws(TriggerError) -> Int? {
        guard !node.isEmpty else { return nil }
        guard case .integer(let value)? = node.leafValue, range.contains(Int(clamping: value)) else {
            throw TriggerError("hook \"\(name)\": \"\(field)\" is a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(value)
    }

    func node(revealingSecret: Bool) -> Node {
        let kinds = TriggerEvent.Kind.allCases.filter { events.contains($0) }
        let eventList = kinds.count == 3 ? [Node("written")] : kinds.map { Node($0.rawValue) }
        var children = Node.empty
        for (index, event) in eventList.enumerated() { children.setChild(ChildKey(String(index)), to: event) }
        return Node([
            "path": Node(pattern.description), "events": children, "url": Node(url),
            "secret": Node(revealingSecret ? secret : HooksDocument.redactedSecret), "attempts": Node(attempts),
            "timeoutSeconds": Node(timeoutSeconds),
        ])
    }
}
