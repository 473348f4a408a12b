import Foundation

/// An error answered in Google's JSON envelope (docs/auth.md §3.1). Business errors are HTTP 400 with
/// `reason: "invalid"` and a `message` of `CODE` or `CODE : detail` (exactly one space either side of the
/// colon: the JS SDK splits on it). Infrastructure errors carry a `status` name instead.
public struct AuthError: Error, Equatable, Sendable, CustomStringConvertible {
    public let httpStatus: Int
    /// `CODE` or `CODE : detail`.
    public let message: String
    let reason: String
    let statusName: String?

    /// The code before any ` : detail`.
    public var code: String {
        message.range(of: " : ").map { String(message[..<$0.lowerBound]) } ?? message
    }

    public var description: String { message }

    /// A 400 business error such as `EMAIL_EXISTS`, optionally with a human detail.
    public static func invalid(_ code: String, _ detail: String? = nil) -> AuthError {
        AuthError(httpStatus: 400, message: detail.map { "\(code) : \($0)" } ?? code, reason: "invalid", statusName: nil)
    }

    static let emailExists = invalid("EMAIL_EXISTS")
    static let invalidEmail = invalid("INVALID_EMAIL")
    static let missingEmail = invalid("MISSING_EMAIL")
    static let missingPassword = invalid("MISSING_PASSWORD")
    static let weakPassword = invalid("WEAK_PASSWORD", "Password should be at least 6 characters")
    static let invalidLoginCredentials = invalid("INVALID_LOGIN_CREDENTIALS")
    static let userDisabled = invalid("USER_DISABLED")
    static let userNotFound = invalid("USER_NOT_FOUND")
    static let invalidIDToken = invalid("INVALID_ID_TOKEN")
    static let missingIDToken = invalid("MISSING_ID_TOKEN")
    static let tokenExpired = invalid("TOKEN_EXPIRED")
    static let invalidOobCode = invalid("INVALID_OOB_CODE")
    static let expiredOobCode = invalid("EXPIRED_OOB_CODE")
    static let missingOobCode = invalid("MISSING_OOB_CODE")
    static let missingLocalID = invalid("MISSING_LOCAL_ID")
    static let tooManyAttempts = invalid(
        "TOO_MANY_ATTEMPTS_TRY_LATER",
        "Access to this account has been temporarily disabled due to many failed login attempts. You can immediately restore it by resetting your password or you can try again later.")

    static func infrastructure(_ status: Int, _ statusName: String, _ message: String, reason: String) -> AuthError {
        AuthError(httpStatus: status, message: message, reason: reason, statusName: statusName)
    }

    static let notFound = infrastructure(404, "NOT_FOUND", "Not Found", reason: "notFound")
    static let missingAPIKey = infrastructure(
        403, "PERMISSION_DENIED", "The request is missing a valid API key.", reason: "forbidden")
    static let unauthenticated = infrastructure(
        401, "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
        reason: "authError")
    static let parseError = infrastructure(400, "INVALID_ARGUMENT", "Invalid JSON payload received.", reason: "parseError")
    static func notImplemented(_ what: String) -> AuthError {
        infrastructure(501, "NOT_IMPLEMENTED", "\(what) is not implemented in Hearth.", reason: "unimplemented")
    }
    static let internalError = infrastructure(500, "INTERNAL", "Internal error encountered.", reason: "backendError")

    /// The JSON body.
    var json: [String: Any] {
        var entry: [String: Any] = ["message": message, "reason": reason]
        if statusName == nil || httpStatus == 403 { entry["domain"] = "global" }
        var error: [String: Any] = ["code": httpStatus, "message": message, "errors": [entry]]
        if let statusName { error["status"] = statusName }
        return ["error": error]
    }
}
