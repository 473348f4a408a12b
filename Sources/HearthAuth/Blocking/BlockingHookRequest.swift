import Foundation
import Synchronization

/// What the server POSTs to a blocking hook, named as firebase-functions' `AuthBlockingEvent`, so a
/// blocking function's body moves over with its field names:
///
///     {"eventId": "…", "eventType": "beforeCreate", "timestamp": "2026-12-05T17:40:00.000Z", "project": "demo",
///      "data": {"uid": "…", "email": "ada@example.com", "emailVerified": false, "providerData": […], …},
///      "additionalUserInfo": {"providerId": "password", "isNewUser": true},
///      "ipAddress": "203.0.113.7", "userAgent": "…"}
struct BlockingHookRequest {
    var eventId: String
    var event: BlockingHooks.Event
    var time: Int64
    var project: String
    var user: UserRecord
    var provider: String
    var isNewUser: Bool
    var ipAddress: String?
    var userAgent: String?

    var body: [UInt8] {
        var out = "{\"eventId\":\(AuthEvent.quoted(eventId)),\"eventType\":\"\(event.rawValue)\""
        out += ",\"timestamp\":\"\(AuthService.rfc3339(time))\",\"project\":\(AuthEvent.quoted(project))"
        out += ",\"data\":\(user.eventJSON)"
        out += ",\"additionalUserInfo\":{\"providerId\":\(AuthEvent.quoted(provider)),\"isNewUser\":\(isNewUser)}"
        if let ipAddress { out += ",\"ipAddress\":\(AuthEvent.quoted(ipAddress))" }
        if let userAgent { out += ",\"userAgent\":\(AuthEvent.quoted(String(userAgent.prefix(512))))" }
        return Array((out + "}").utf8)
    }
}

/// How each blocking hook has been doing on this node (the project config shows it beside the hook):
/// calls, refusals, failures, and the last failure's reason.
final class BlockingHookStatus: Sendable {
    struct Counts: Sendable, Equatable {
        var calls = 0
        var refusals = 0
        var failures = 0
        var lastMilliseconds = 0
        var lastFailure: String?
        var lastFailureTime: Int64?
    }

    private let counts = Mutex<[BlockingHooks.Event: Counts]>([:])

    func record(_ event: BlockingHooks.Event, _ answer: BlockingHookAnswer, milliseconds: Int, at time: Int64) {
        counts.withLock { all in
            var counts = all[event] ?? Counts()
            counts.calls += 1
            counts.lastMilliseconds = milliseconds
            switch answer {
            case .allow: break
            case .deny: counts.refusals += 1
            case .failed(let reason):
                counts.failures += 1
                counts.lastFailure = reason
                counts.lastFailureTime = time
            }
            all[event] = counts
        }
    }

    func json(_ event: BlockingHooks.Event) -> [String: Any] {
        let counts = self.counts.withLock { $0[event] } ?? Counts()
        var json: [String: Any] = [
            "calls": counts.calls, "refusals": counts.refusals, "failures": counts.failures, "lastMilliseconds": counts.lastMilliseconds,
        ]
        if let failure = counts.lastFailure, let time = counts.lastFailureTime {
            json["lastFailure"] = failure
            json["lastFailureTime"] = AuthService.rfc3339(time)
        }
        return json
    }
}
