import Foundation
import HearthAuth

/// A blocking auth hook's answer (``BlockingHookAnswer``): an HTTP status and a body from a URL the
/// admin configured, read before a sign-up or sign-in goes ahead. Properties: nothing crashes; the
/// status class decides the kind of answer (2xx never refuses, 4xx never allows); claims allowed
/// through are JSON objects within Firebase's 1,000 characters; a refusal's message is bounded.
///
/// Input: one byte choosing the status, one choosing the event, then the body.
enum BlockingAnswerFuzzing {
    static let target = FuzzTarget(
        name: "blocking-answer", input: "a status choice (one byte), an event choice (one byte), then a blocking hook's answer body", run: run)

    static let statuses = [200, 204, 201, 400, 403, 401, 500, 503, 302, 0]

    static func run(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        let status = statuses[Int(bytes[0]) % statuses.count]
        let event: BlockingHooks.Event = bytes[1] % 2 == 0 ? .beforeCreate : .beforeSignIn
        let answer = BlockingHookAnswer(status: status, body: Array(bytes.dropFirst(2)), event: event)
        switch answer {
        case .allow(let changes):
            fuzzCheck((200..<300).contains(status), "HTTP \(status) let the operation through")
            for claims in [changes.customClaims, changes.sessionClaims].compactMap({ $0 }) {
                fuzzCheck(claims.count <= 1000, "claims over 1,000 characters were accepted")
                let parsed = try? JSONSerialization.jsonObject(with: Data(claims.utf8))
                fuzzCheck(parsed is [String: Any], "claims that are not a JSON object were accepted")
            }
            if event == .beforeCreate { fuzzCheck(changes.sessionClaims == nil, "session claims before a create") }
        case .deny(let message, let statusName):
            fuzzCheck((400..<500).contains(status), "HTTP \(status) refused the operation")
            fuzzCheck(message.count <= BlockingHookAnswer.messageCharactersMax, "a refusal's message beyond its bound")
            fuzzCheck(!statusName.isEmpty && statusName.count <= 64, "a refusal's status name out of bounds")
        case .failed:
            break
        }
    }
}

/// The `blockingFunctions` of a project config PATCH (an admin's JSON): ``BlockingHooks/apply(_:now:)``.
/// Properties: nothing crashes; accepted hooks have an http(s) URL, a secret and a timeout within
/// bounds, and read back from their stored form as themselves.
///
/// Input: the `blockingFunctions` object's JSON.
enum BlockingConfigFuzzing {
    static let target = FuzzTarget(name: "blocking-config", input: "a project config's blockingFunctions (JSON)", run: run)

    static func run(_ bytes: [UInt8]) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) as? [String: Any] else { return }
        var hooks = BlockingHooks()
        do { try hooks.apply(object, now: 1) } catch { return }
        for event in BlockingHooks.Event.allCases {
            guard let trigger = hooks[event] else { continue }
            let url = trigger.url.lowercased()
            fuzzCheck(url.hasPrefix("http://") || url.hasPrefix("https://"), "a hook URL that is not http(s)")
            fuzzCheck((BlockingHooks.secretBytesMin...BlockingHooks.secretBytesMax).contains(trigger.secret.utf8.count), "a secret out of bounds")
            fuzzCheck(BlockingHooks.timeoutSecondsRange.contains(trigger.timeoutSeconds), "a timeout out of range")
        }
        fuzzCheck(BlockingHooks(storedJSON: hooks.storedJSON) == hooks, "accepted blocking hooks do not read back as themselves")
    }
}
