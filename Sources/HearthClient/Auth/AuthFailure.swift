import Foundation

/// Builds the `NSError`s FirebaseAuth reports: domain `FIRAuthErrorDomain`, an ``AuthErrorCode``, the
/// error's name (`ERROR_EMAIL_ALREADY_IN_USE`) under `FIRAuthErrorUserInfoNameKey`, and a description:
/// the server's detail when it gave one (`WEAK_PASSWORD : Password should be at least 6 characters`),
/// else Firebase's text for the code.
enum AuthFailure {
    static func error(_ code: AuthErrorCode, detail: String? = nil, underlying: (any Error)? = nil) -> NSError {
        var info: [String: Any] = [
            NSLocalizedDescriptionKey: detail ?? description(of: code),
            AuthErrors.userInfoNameKey: name(of: code),
        ]
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        return NSError(domain: AuthErrors.domain, code: code.rawValue, userInfo: info)
    }

    /// `error` with what the app needs to recover from it: the address in use and the provider's
    /// credential (FirebaseAuth's `userInfoEmailKey` and `userInfoUpdatedCredentialKey`).
    static func recoverable(_ error: NSError, email: String?, credential: OAuthCredential?) -> NSError {
        var info = error.userInfo
        if let email { info[AuthErrors.userInfoEmailKey] = email }
        if let credential { info[AuthErrors.userInfoUpdatedCredentialKey] = credential }
        return NSError(domain: error.domain, code: error.code, userInfo: info)
    }

    /// The error for a message in Google's error envelope (`{"error":{"message":"EMAIL_EXISTS"}}`):
    /// `CODE` or `CODE : detail`, mapped as FirebaseAuth maps them.
    static func server(message: String) -> NSError {
        let parts = message.split(separator: ":", maxSplits: 1)
        let name = parts.first.map { $0.trimmingCharacters(in: .whitespaces) } ?? message
        let detail = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : nil
        guard let code = serverCodes[name] else {
            return error(.internalError, detail: "An internal error has occurred (the server said \(message)).")
        }
        let reason = detail?.isEmpty == false ? detail : nil
        // FirebaseAuth keeps its own text for a weak password and gives the server's as the reason.
        if code == .weakPassword {
            let base = error(code)
            var info = base.userInfo
            if let reason { info[NSLocalizedFailureReasonErrorKey] = reason }
            return NSError(domain: base.domain, code: base.code, userInfo: info)
        }
        return error(code, detail: reason)
    }

    /// The server's error strings FirebaseAuth recognises, and the codes it reports for them.
    /// FirebaseAuth's iOS table, and one more: `INVALID_REFRESH_TOKEN` (a token the server no longer
    /// knows) is `invalidUserToken` here, which signs the app out, where the iOS SDK reports an internal
    /// error and keeps a user whose session cannot come back.
    static let serverCodes: [String: AuthErrorCode] = [
        "EMAIL_EXISTS": .emailAlreadyInUse,
        "INVALID_PASSWORD": .wrongPassword,
        "INVALID_LOGIN_CREDENTIALS": .invalidCredential,
        "INVALID_IDP_RESPONSE": .invalidCredential,
        "MISSING_OR_INVALID_NONCE": .missingOrInvalidNonce,
        "INVALID_PROVIDER_ID": .invalidProviderID,
        "INVALID_PENDING_TOKEN": .invalidCredential,
        "EMAIL_NOT_FOUND": .userNotFound,
        "USER_NOT_FOUND": .userNotFound,
        "WEAK_PASSWORD": .weakPassword,
        "INVALID_EMAIL": .invalidEmail,
        "INVALID_IDENTIFIER": .invalidEmail,
        "MISSING_EMAIL": .missingEmail,
        "TOO_MANY_ATTEMPTS_TRY_LATER": .tooManyRequests,
        "USER_DISABLED": .userDisabled,
        "CREDENTIAL_TOO_OLD_LOGIN_AGAIN": .requiresRecentLogin,
        "INVALID_ID_TOKEN": .invalidUserToken,
        "INVALID_REFRESH_TOKEN": .invalidUserToken,
        "TOKEN_EXPIRED": .userTokenExpired,
        "OPERATION_NOT_ALLOWED": .operationNotAllowed,
        "PASSWORD_LOGIN_DISABLED": .operationNotAllowed,
        "ADMIN_ONLY_OPERATION": .adminRestrictedOperation,
        "EXPIRED_OOB_CODE": .expiredActionCode,
        "INVALID_OOB_CODE": .invalidActionCode,
        "INVALID_CUSTOM_TOKEN": .invalidCustomToken,
        "CREDENTIAL_MISMATCH": .customTokenMismatch,
        "INVALID_CONTINUE_URI": .invalidContinueURI,
        "MISSING_CONTINUE_URI": .missingContinueURI,
        "UNAUTHORIZED_DOMAIN": .unauthorizedDomain,
        "INVALID_MESSAGE_PAYLOAD": .invalidMessagePayload,
        "INVALID_SENDER": .invalidSender,
        "INVALID_RECIPIENT_EMAIL": .invalidRecipientEmail,
        "MISSING_IOS_BUNDLE_ID": .missingIosBundleID,
        "MISSING_ANDROID_PACKAGE_NAME": .missingAndroidPackageName,
        "INVALID_HOSTING_LINK_DOMAIN": .invalidHostingLinkDomain,
        "EMAIL_CHANGE_NEEDS_VERIFICATION": .emailChangeNeedsVerification,
        "UNVERIFIED_EMAIL": .unverifiedEmail,
        "FEDERATED_USER_ID_ALREADY_LINKED": .credentialAlreadyInUse,
        "TENANT_ID_MISMATCH": .tenantIDMismatch,
        "UNSUPPORTED_TENANT_OPERATION": .unsupportedTenantOperation,
        "PASSWORD_DOES_NOT_MEET_REQUIREMENTS": .passwordDoesNotMeetRequirements,
        "BLOCKING_FUNCTION_ERROR_RESPONSE": .blockingCloudFunctionError,
        "QUOTA_EXCEEDED": .quotaExceeded,
    ]

    /// The names FirebaseAuth gives that do not follow the pattern of ``name(of:)``: acronyms kept whole,
    /// shortened names, and two without the `ERROR_` prefix.
    private static let irregularNames: [AuthErrorCode: String] = [
        .networkError: "ERROR_NETWORK_REQUEST_FAILED",
        .invalidAPIKey: "ERROR_INVALID_API_KEY",
        .invalidProviderID: "ERROR_INVALID_PROVIDER_ID",
        .tenantIDMismatch: "ERROR_TENANT_ID_MISMATCH",
        .invalidContinueURI: "ERROR_INVALID_CONTINUE_URI",
        .missingContinueURI: "ERROR_MISSING_CONTINUE_URI",
        .missingIosBundleID: "ERROR_MISSING_IOS_BUNDLE_ID",
        .missingAndroidPackageName: "ERROR_MISSING_ANDROID_PKG_NAME",
        .malformedJWT: "ERROR_MALFORMED_JWT",
        .blockingCloudFunctionError: "ERROR_BLOCKING_CLOUD_FUNCTION_RETURNED_ERROR",
        .missingVerificationID: "ERROR_MISSING_VERIFICATION_ID",
        .invalidVerificationID: "ERROR_INVALID_VERIFICATION_ID",
        .invalidClientID: "ERROR_INVALID_CLIENT_ID",
        .recaptchaSDKNotLinked: "ERROR_RECAPTCHA_SDK_NOT_LINKED",
        .appVerificationUserInteractionFailure: "ERROR_APP_VERIFICATION_FAILED",
        .webSignInUserInteractionFailure: "ERROR_WEB_USER_INTERACTION_FAILURE",
        .missingAppCredential: "MISSING_APP_CREDENTIAL",
        .invalidAppCredential: "INVALID_APP_CREDENTIAL",
    ]

    /// `ERROR_` and the code's name in capitals, a `_` before each word (FirebaseAuth's names).
    static func name(of code: AuthErrorCode) -> String {
        if let irregular = irregularNames[code] { return irregular }
        var name = "ERROR_"
        for character in String(describing: code) {
            if character.isUppercase { name += "_" }
            name += character.uppercased()
        }
        return name
    }

    static func description(of code: AuthErrorCode) -> String {
        switch code {
        case .emailAlreadyInUse: "The email address is already in use by another account."
        case .wrongPassword: "The password is invalid or the user does not have a password."
        case .invalidCredential: "The supplied auth credential is malformed or has expired."
        case .userNotFound: "There is no user record corresponding to this identifier. The user may have been deleted."
        case .weakPassword: "The password must be 6 characters long or more."
        case .invalidEmail: "The email address is badly formatted."
        case .missingEmail: "An email address must be provided."
        case .tooManyRequests: "We have blocked all requests from this device due to unusual activity. Try again later."
        case .userDisabled: "The user account has been disabled by an administrator."
        case .requiresRecentLogin:
            "This operation is sensitive and requires recent authentication. Log in again before retrying this request."
        case .networkError: "Network error (such as timeout, interrupted connection or unreachable host) has occurred."
        case .userTokenExpired: "The user's credential is no longer valid. The user must sign in again."
        case .invalidUserToken: "This user's credential isn't valid for this project. This can happen if the user's token has been tampered with, or if the user isn't for the project associated with this API key."
        case .operationNotAllowed: "The given sign-in provider is disabled for this Firebase project."
        case .expiredActionCode: "The action code has expired."
        case .invalidActionCode: "The action code is invalid. This can happen if the code is malformed, expired, or has already been used."
        case .invalidCustomToken: "The custom token format is incorrect. Please check the documentation."
        case .userMismatch: "The supplied credentials do not correspond to the previously signed in user."
        case .nullUser: "A null user object was provided as the argument for an operation which requires a non-null user object."
        case .keychainError: "An error occurred when accessing the keychain."
        case .accountExistsWithDifferentCredential:
            "An account already exists with the same email address but different sign-in credentials. Sign in using a provider associated with this email address."
        case .credentialAlreadyInUse: "This credential is already associated with a different user account."
        case .providerAlreadyLinked: "This user already has an account of this provider type linked."
        case .noSuchProvider: "This user is not linked to an account of the given provider type."
        case .missingOrInvalidNonce: "The request has a missing or invalid nonce: the ID token's nonce must be the SHA-256 of the raw nonce sent with it."
        case .invalidProviderID: "The provider ID is not valid for this operation."
        default: "An internal error has occurred, print and inspect the error details for more information."
        }
    }
}
