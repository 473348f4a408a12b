/// Which changes a listener hears about, as `DataEventType` in FirebaseDatabase (same raw values).
public enum DataEventType: Int, Sendable {
    case childAdded = 0
    case childRemoved = 1
    case childChanged = 2
    case childMoved = 3
    case value = 4

    var listenType: ListenEventType {
        switch self {
        case .childAdded: .childAdded
        case .childRemoved: .childRemoved
        case .childChanged: .childChanged
        case .childMoved: .childMoved
        case .value: .value
        }
    }
}

/// The handle `observe` returns, for `removeObserver(withHandle:)`.
public typealias DatabaseHandle = UInt
