import HearthCore
import HearthStorage

extension WriteOperation {
    private static let uid = Path("uid")

    /// What the change feed records of this write when `caller` makes it over `channel` at `time`
    /// (docs/feed.md): who, as Cloud Functions' database events say it, and what was written.
    func feedNote(by caller: Caller, over channel: ServerMetrics.Channel, at time: Int64) -> ChangeFeedNote {
        let data: ChangeFeedNote.Data
        switch self {
        case .set(_, let value, _): data = .set(value)
        case .update(_, let values): data = .update(values.map { ChangeFeedValue(path: $0.0, value: $0.1) })
        }
        let uid = caller.isAdmin ? nil : caller.auth?.child(at: Self.uid).stringValue
        let authType: ChangeFeedNote.AuthType = caller.isAdmin ? .admin : uid == nil ? .unauthenticated : .appUser
        return ChangeFeedNote(
            time: time, path: path, data: data, authType: authType, authId: uid,
            channel: channel.rawValue)
    }
}
