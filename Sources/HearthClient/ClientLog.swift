import Foundation
import HearthSupport

/// The SDK's log (``Database/setLoggingEnabled(_:)``): warnings always, the protocol trace when enabled.
enum ClientLog {
    private static let enabled = Locked(false)

    static func setEnabled(_ value: Bool) { enabled.withLock { $0 = value } }

    static func warning(_ message: String) {
        FileHandle.standardError.write(Data("[HearthClient] \(message)\n".utf8))
    }

    static func debug(_ message: @autoclosure () -> String) {
        guard enabled.withLock({ $0 }) else { return }
        FileHandle.standardError.write(Data("[HearthClient] \(message())\n".utf8))
    }
}

/// The SDK's version (``Database/sdkVersion()``).
enum HearthClientVersion {
    static let string = "0.1.0"
}
