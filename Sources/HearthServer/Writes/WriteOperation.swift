import HearthCore
import HearthStorage
import HearthProtocol
import HearthWire

/// A parsed write, whichever protocol sent it: what the pipeline authorises, applies and commits.
enum WriteOperation {
    /// An overwrite (REST PUT, POST and DELETE; realtime `p`), a compare-and-set when `ifHash` is set
    /// (REST `if-match`, realtime `h`; `""` is the hash of nothing).
    case set(Path, Node, ifHash: String?)
    /// A multi-path merge of non-overlapping relative paths (REST PATCH; realtime `m`; onDisconnect).
    case update(Path, [(Path, Node)])

    /// The write's shape, for fan-out.
    var shape: Write {
        switch self {
        case .set(let path, _, _): return .set(path)
        case .update(let path, let values): return .update(path, values.map(\.0))
        }
    }

    /// The location answered with the write's value (a merge: where it was sent).
    var path: Path {
        switch self {
        case .set(let path, _, _), .update(let path, _): return path
        }
    }
}

/// Why a write was not made, in one shape for every protocol: REST maps it to a status
/// (``RESTError/init(_:)``), realtime to a status in its reply (``WriteFailure/wireStatus``).
enum WriteFailure: Error, Equatable {
    /// The request itself is wrong (bad JSON, a bad key, overlapping paths): REST 400, realtime `failure`.
    case invalid(String)
    /// The rules said no: REST 401 `Permission denied`, realtime `permission_denied`.
    case permissionDenied
    /// A compare-and-set's hash no longer matches: REST 412, realtime `datastale`.
    case stale
    /// Storage could not commit it: REST 500, realtime `failure`.
    case storage(String)

    /// Storage failed, rather than the write being refused.
    var isStorage: Bool {
        if case .storage = self { return true }
        return false
    }

    var message: String {
        switch self {
        case .invalid(let message), .storage(let message): return message
        case .permissionDenied: return "Permission denied"
        case .stale: return "Transaction hash does not match"
        }
    }

    /// What a committed-write error means to the client.
    init(_ error: any Error) {
        switch error {
        case let failure as WriteFailure: self = failure
        case let error as DataError where error.code == .hashMismatch: self = .stale
        case let error as DataError: self = .invalid(error.message)
        case is PermissionDenied: self = .permissionDenied
        case let error as StorageError: self = .storage(error.message)
        default: self = .storage("Internal error")
        }
    }
}

extension WriteFailure {
    /// The status of a realtime reply (docs/protocol.md §2.1).
    var wireStatus: Wire.Status {
        switch self {
        case .invalid, .storage: return .failure
        case .permissionDenied: return .permissionDenied
        case .stale: return .dataStale
        }
    }
}
