public import Foundation
public import HearthClient

/// An account as auth triggers see it: firebase-admin's `UserRecord`, without secrets.
public struct UserRecord: Sendable, Equatable {
    public let uid: String
    public let email: String?
    public let emailVerified: Bool
    public let displayName: String?
    public let photoURL: String?
    public let phoneNumber: String?
    public let disabled: Bool
    /// The custom claims an admin set, as JSON text (nil: none).
    public let customClaimsJSON: String?
    /// The sign-in providers linked to the account (`password`, `google.com`, …).
    public let providerIDs: [String]
    /// When the account was made, and last signed in.
    public let creationTime: Date
    public let lastSignInTime: Date?

    init?(json: [String: Any]) {
        guard let uid = json["uid"] as? String else { return nil }
        self.uid = uid
        email = json["email"] as? String
        emailVerified = json["emailVerified"] as? Bool ?? false
        displayName = json["displayName"] as? String
        photoURL = json["photoURL"] as? String
        phoneNumber = json["phoneNumber"] as? String
        disabled = json["disabled"] as? Bool ?? false
        customClaimsJSON = json["customClaims"].flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) }
            .map { String(decoding: $0, as: UTF8.self) }
        providerIDs = (json["providerData"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }
        let metadata = json["metadata"] as? [String: Any] ?? [:]
        creationTime = Date(timeIntervalSince1970: ((metadata["creationTime"] as? NSNumber)?.doubleValue ?? 0) / 1000)
        lastSignInTime = (metadata["lastSignInTime"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue / 1000) }
    }
}

/// What a user function is called with (Cloud Functions' auth triggers, `functions.auth.user().onCreate`).
public struct UserEvent: Sendable {
    /// The account: as made (`onUserCreated`), or as it was (`onUserDeleted`).
    public let data: UserRecord
    /// The same on every delivery of this event to this function: `auth-POSITION`.
    public let id: String
    public let time: Date
    /// `providers/firebase.auth/eventTypes/user.create` or `.delete`, as Cloud Functions say it.
    public let type: String
    /// The database with admin access, for what the function writes.
    public let database: Database
    /// The event's position in the auth feed.
    public let position: Int64
}
