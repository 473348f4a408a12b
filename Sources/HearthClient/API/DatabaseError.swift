import Foundation

/// Errors as Firebase's iOS SDK reports them: `NSError` in domain `com.firebase`, with its codes
/// (`permission_denied` 1, `unavailable` 2, `write_canceled` 3, anything else 9999) and the server's
/// reason as the description when it sent one.
public enum DatabaseErrorCode: Int, Sendable {
    case permissionDenied = 1
    case unavailable = 2
    case writeCanceled = 3
    /// Data the SDK refused before sending (Hearth's own: Firebase raises an exception instead).
    case invalidData = 1001
    case other = 9999
}

enum DatabaseErrors {
    static let domain = "com.firebase"

    static func error(_ outcome: RequestOutcome) -> NSError {
        let code: DatabaseErrorCode
        let fallback: String
        switch outcome.status {
        case "permission_denied": (code, fallback) = (.permissionDenied, "Permission Denied")
        case "unavailable": (code, fallback) = (.unavailable, "Service is unavailable")
        case "write_canceled": (code, fallback) = (.writeCanceled, "Write cancelled by user")
        case "invalid_data": (code, fallback) = (.invalidData, "Invalid data")
        default: (code, fallback) = (.other, outcome.status)
        }
        return NSError(
            domain: domain, code: code.rawValue,
            userInfo: [NSLocalizedDescriptionKey: outcome.reason ?? fallback, "status": outcome.status])
    }

    static func invalid(_ message: String) -> NSError {
        NSError(domain: domain, code: DatabaseErrorCode.invalidData.rawValue, userInfo: [NSLocalizedDescriptionKey: message])
    }

    /// `getData()` offline with nothing cached: FirebaseCore's domain, code 1, as Firebase does.
    static func offline(_ description: String) -> NSError {
        NSError(
            domain: "com.firebase.core", code: 1,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "Unable to get latest value for query \(description), client offline with no active listeners and no matching disk cache entries"
            ])
    }
}

/// Carries a non-Sendable closure (an app's callback) to the callback queue, where it is called.
struct CallbackBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
