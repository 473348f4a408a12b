import Foundation

/// The blocking hooks of a project (docs/functions.md, "Blocking auth hooks"): URLs the server asks
/// before an account is created and before a sign-in returns tokens, as Firebase's blocking functions
/// (`beforeUserCreated`, `beforeUserSignedIn`). Kept as the auth setting `blocking_hooks`, so a cluster's
/// nodes share them; set through Firebase's project config (`blockingFunctions.triggers`), with Hearth's
/// fields beside `functionUri`: the signing `secret`, `timeoutSeconds` and `failOpen`.
public struct BlockingHooks: Equatable, Sendable {
    public enum Event: String, Sendable, CaseIterable {
        case beforeCreate, beforeSignIn
    }

    /// One hook: where it is, how its requests are signed, how long it may take, and what a failure
    /// (no answer in time, a 5xx, an answer that does not parse) means.
    public struct Trigger: Equatable, Sendable {
        public var url: String
        /// The key of the `Hearth-Signature` HMAC, as a webhook's.
        public var secret: String
        public var timeoutSeconds: Int
        /// True: a failed hook lets the sign-up or sign-in go ahead unchanged. False (the default, as
        /// Firebase's): it is refused.
        public var failOpen: Bool
        /// Milliseconds since 1970 of the last change.
        public var updateTime: Int64

        public init(url: String, secret: String, timeoutSeconds: Int = BlockingHooks.defaultTimeoutSeconds, failOpen: Bool = false, updateTime: Int64 = 0) {
            (self.url, self.secret, self.timeoutSeconds, self.failOpen, self.updateTime) = (url, secret, timeoutSeconds, failOpen, updateTime)
        }
    }

    public var beforeCreate: Trigger?
    public var beforeSignIn: Trigger?

    public init(beforeCreate: Trigger? = nil, beforeSignIn: Trigger? = nil) {
        self.beforeCreate = beforeCreate
        self.beforeSignIn = beforeSignIn
    }

    /// Firebase's deadline for a blocking function, and the default here.
    public static let defaultTimeoutSeconds = 7
    public static let timeoutSecondsRange = 1...10
    /// As a webhook's secret.
    public static let secretBytesMin = 16
    public static let secretBytesMax = 256
    public static let urlBytesMax = 2048

    public subscript(event: Event) -> Trigger? {
        get { event == .beforeCreate ? beforeCreate : beforeSignIn }
        set { if event == .beforeCreate { beforeCreate = newValue } else { beforeSignIn = newValue } }
    }

    /// Firebase's shape of the project config's `blockingFunctions`, secrets left out.
    var config: [String: Any] {
        var triggers: [String: Any] = [:]
        for event in Event.allCases {
            guard let trigger = self[event] else { continue }
            triggers[event.rawValue] = [
                "functionUri": trigger.url, "timeoutSeconds": trigger.timeoutSeconds, "failOpen": trigger.failOpen,
                "updateTime": AuthService.rfc3339(trigger.updateTime),
            ] as [String: Any]
        }
        return ["triggers": triggers]
    }

    /// Applies the `blockingFunctions` of a config PATCH: each trigger named is replaced (a trigger
    /// without `secret` keeps the one it had), and one whose `functionUri` is empty or null is removed.
    public mutating func apply(_ blockingFunctions: [String: Any], now: Int64) throws(AuthError) {
        guard let triggers = blockingFunctions["triggers"] as? [String: Any] else {
            throw AuthError.invalid("INVALID_CONFIG", "blockingFunctions needs a \"triggers\" object")
        }
        if let unknown = triggers.keys.sorted().first(where: { Event(rawValue: $0) == nil }) {
            throw AuthError.invalid("INVALID_CONFIG", "unknown blocking trigger \"\(unknown)\" (beforeCreate or beforeSignIn)")
        }
        for event in Event.allCases {
            guard let given = triggers[event.rawValue] else { continue }
            guard let fields = given as? [String: Any], let url = fields["functionUri"] as? String, !url.isEmpty else {
                self[event] = nil
                continue
            }
            self[event] = try Self.trigger(fields, url: url, event: event, keeping: self[event], now: now)
        }
    }

    private static func trigger(_ fields: [String: Any], url: String, event: Event, keeping old: Trigger?, now: Int64) throws(AuthError) -> Trigger {
        guard url.utf8.count <= urlBytesMax, let parsed = URLComponents(string: url), let scheme = parsed.scheme?.lowercased(),
            scheme == "https" || scheme == "http", !(parsed.host ?? "").isEmpty
        else { throw AuthError.invalid("INVALID_CONFIG", "\(event.rawValue).functionUri must be an http or https URL") }
        let secret = (fields["secret"] as? String) ?? (old?.secret ?? "")
        guard (secretBytesMin...secretBytesMax).contains(secret.utf8.count) else {
            throw AuthError.invalid("INVALID_CONFIG", "\(event.rawValue).secret must be a string of \(secretBytesMin) to \(secretBytesMax) bytes (the key of Hearth-Signature)")
        }
        var timeout = defaultTimeoutSeconds
        if let given = fields["timeoutSeconds"] {
            guard let number = given as? Int, timeoutSecondsRange.contains(number) else {
                throw AuthError.invalid("INVALID_CONFIG", "\(event.rawValue).timeoutSeconds must be a whole number from \(timeoutSecondsRange.lowerBound) to \(timeoutSecondsRange.upperBound)")
            }
            timeout = number
        }
        var failOpen = false
        if let given = fields["failOpen"] {
            guard let flag = given as? Bool else { throw AuthError.invalid("INVALID_CONFIG", "\(event.rawValue).failOpen must be true or false") }
            failOpen = flag
        }
        return Trigger(url: url, secret: secret, timeoutSeconds: timeout, failOpen: failOpen, updateTime: now)
    }

    /// How storages keep the hooks (secrets included, so the storage is owner-only).
    public var storedJSON: String {
        var object: [String: Any] = [:]
        for event in Event.allCases {
            guard let trigger = self[event] else { continue }
            object[event.rawValue] = [
                "url": trigger.url, "secret": trigger.secret, "timeoutSeconds": trigger.timeoutSeconds, "failOpen": trigger.failOpen,
                "updateTime": trigger.updateTime,
            ] as [String: Any]
        }
        return JSONText.encode(object, sorted: true)
    }

    /// The hooks in ``storedJSON``'s form; nil when `text` is not a JSON object.
    public init?(storedJSON text: String) {
        guard let object = JSONText.object(Array(text.utf8)) else { return nil }
        self.init()
        for event in Event.allCases {
            guard let fields = object[event.rawValue] as? [String: Any], let url = fields["url"] as? String,
                let secret = fields["secret"] as? String
            else { continue }
            self[event] = Trigger(
                url: url, secret: secret, timeoutSeconds: fields["timeoutSeconds"] as? Int ?? Self.defaultTimeoutSeconds,
                failOpen: fields["failOpen"] as? Bool ?? false, updateTime: (fields["updateTime"] as? NSNumber)?.int64Value ?? 0)
        }
    }
}
