import Foundation
import HearthProtocol

/// Something that happened to an account, in the auth feed (docs/functions.md, "Auth triggers"): what
/// `onUserCreated` and `onUserDeleted` are handed. Recorded by the account store in the same transaction
/// as the change, so the feed holds an event exactly when the store holds its change.
public struct AuthEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case created, deleted, disabled, enabled
    }

    /// Grows with every event (not necessarily by one).
    public var position: Int64
    /// Milliseconds since 1970.
    public var time: Int64
    public var kind: Kind
    public var uid: String
    /// The account as ``UserRecord/eventJSON`` shows it: after the change, or before a deletion.
    public var userJSON: String

    public init(position: Int64, time: Int64, kind: Kind, uid: String, userJSON: String) {
        (self.position, self.time, self.kind, self.uid, self.userJSON) = (position, time, kind, uid, userJSON)
    }

    var json: String {
        "{\"position\":\(position),\"time\":\(time),\"type\":\"\(kind.rawValue)\",\"uid\":\(Self.quoted(uid)),\"user\":\(userJSON)}"
    }

    static func quoted(_ text: String) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: [text], options: [.fragmentsAllowed]),
            let array = String(data: data, encoding: .utf8)
        else { return "\"\"" }
        return String(array.dropFirst().dropLast())
    }
}

/// A page of the auth feed.
public struct AuthEventPage: Sendable, Equatable {
    public var events: [AuthEvent]
    /// The newest position recorded (0: none yet).
    public var head: Int64
    /// The last position retention removed (0: none).
    public var trimmedThrough: Int64

    public init(events: [AuthEvent], head: Int64, trimmedThrough: Int64) {
        (self.events, self.head, self.trimmedThrough) = (events, head, trimmedThrough)
    }
}

/// How long the auth feed keeps events, and how many at most (the oldest go first).
public enum AuthEventRetention {
    public static let maxAgeMilliseconds: Int64 = 7 * 24 * 3600 * 1000
    public static let maxEvents: Int64 = 100_000
    /// Retention runs on every this many events recorded.
    public static let everyEvents: Int64 = 256
    public static let pageEventsMax = 1000
}

extension UserRecord {
    /// What an auth event says of an account: what firebase-admin's `UserRecord` shows, never a password
    /// hash or a token.
    public var eventJSON: String {
        var fields: [String: Any] = [
            "uid": localId, "emailVerified": emailVerified, "disabled": disabled,
            "metadata": ["creationTime": createdAt, "lastSignInTime": lastLoginAt.map { $0 as Any } ?? NSNull()],
            "providerData": (linkedProviders ?? []).map { provider -> [String: Any] in
                var entry: [String: Any] = ["providerId": provider.providerId, "uid": provider.rawId]
                if let email = provider.email { entry["email"] = email }
                return entry
            } + (hasPasswordProvider ? [["providerId": "password", "uid": email ?? localId]] : []),
        ]
        if let email { fields["email"] = email }
        if let displayName { fields["displayName"] = displayName }
        if let photoUrl { fields["photoURL"] = photoUrl }
        if let phoneNumber { fields["phoneNumber"] = phoneNumber }
        if let customAttributes, let claims = try? JSONSerialization.jsonObject(with: Data(customAttributes.utf8)) {
            fields["customClaims"] = claims
        }
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

extension AuthService {
    /// `GET /hearth/v1/auth/events?after=P&limit=N` (admins): the auth feed after P.
    func authEventsRoute(_ request: HTTPRequest) throws -> HTTPResponse {
        guard try adminCredential(request) else { throw AuthError.unauthenticated }
        guard request.method == .get else { throw AuthError.notFound }
        let after = try request.query("after").map { text throws(AuthError) -> Int64 in
            guard let value = Int64(text), value >= 0 else { throw AuthError.invalid("INVALID_ARGUMENT", "after is a feed position, not '\(text.prefix(40))'") }
            return value
        } ?? 0
        let limit = try request.query("limit").map { text throws(AuthError) -> Int in
            guard let value = Int(text), (0...AuthEventRetention.pageEventsMax).contains(value) else {
                throw AuthError.invalid("INVALID_ARGUMENT", "limit is from 0 to \(AuthEventRetention.pageEventsMax)")
            }
            return value
        } ?? AuthEventRetention.pageEventsMax
        let page = try store.authEvents(after: after, limit: limit)
        if after < page.trimmedThrough {
            let message = "resync needed: auth events after position \(after) are gone (retention removed everything through \(page.trimmedThrough))."
            return HTTPResponse(
                status: 410, headers: [("content-type", "application/json; charset=utf-8")],
                body: Array("{\"error\":\(AuthEvent.quoted(message)),\"trimmedThrough\":\(page.trimmedThrough)}".utf8))
        }
        let next = page.events.last?.position ?? after
        let body = "{\"events\":[" + page.events.map(\.json).joined(separator: ",") + "],\"next\":\(next),\"head\":\(page.head),\"trimmedThrough\":\(page.trimmedThrough)}"
        return HTTPResponse(status: 200, headers: [("content-type", "application/json; charset=utf-8")], body: Array(body.utf8))
    }
}
