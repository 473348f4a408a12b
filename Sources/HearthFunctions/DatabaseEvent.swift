public import Foundation
public import HearthClient

/// A value before and after a write: firebase-functions' `Change`, what `onValueUpdated` and
/// `onValueWritten` hand their handlers.
public struct Change<T: Sendable>: Sendable {
    public let before: T
    public let after: T

    public init(before: T, after: T) {
        self.before = before
        self.after = after
    }
}

/// What a database function is called with: firebase-functions v2's `DatabaseEvent`, in Swift.
///
///     functions.onValueCreated("/jokes/{jokeId}") { event in
///         let text = event.data.childSnapshot(forPath: "text").value as? String
///         try await event.data.ref.child("length").setValue(text?.count ?? 0)
///     }
public struct DatabaseEvent<T: Sendable>: Sendable {
    /// The location's data: a snapshot (`onValueCreated`: after the write; `onValueDeleted`: before it),
    /// or a ``Change`` (`onValueUpdated`, `onValueWritten`). Their `ref`s write with admin access.
    public let data: T
    /// The values of the pattern's `{parameters}` in the location: `["jokeId": "j1"]`.
    public let params: [String: String]
    /// The same for every delivery of this event to this function (after a retry, a restart or a
    /// crash): what handlers make their effects idempotent with. `POSITION-INDEX` in the feed.
    public let id: String
    /// When the server took the write.
    public let time: Date
    /// The location that matched, as a path from the root: `/jokes/j1`.
    public let ref: String
    /// `google.firebase.database.ref.v1.created`, `.updated` or `.deleted`, as Cloud Functions say it.
    public let type: String
    /// Who wrote: `app_user` (with the uid in ``authId``), `admin` or `unauthenticated`.
    public let authType: String
    public let authId: String?
    /// The database with admin access (rules do not apply), for writes elsewhere than `data`'s `ref`.
    public let database: Database
    /// The event's feed position: every event of an earlier position was handed to its functions first.
    public let position: Int64
}
