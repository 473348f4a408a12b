public import Foundation

/// Firebase Auth's error codes, with their raw values: errors reach the app as `NSError` in domain
/// `FIRAuthErrorDomain` with one of these as the code, so `AuthErrorCode(rawValue: (error as NSError).code)`
/// names them as in FirebaseAuth. As in FirebaseAuth 12 (`@objc enum AuthErrorCode: Int, Error` there) the
/// enum is an `Error` type, but the errors the SDK hands out are those NSErrors, whose domain is not the
/// enum's: `error as? AuthErrorCode` gives nil in both.
public enum AuthErrorCode: Int, Error, Sendable {
    case invalidCustomToken = 17000
    case customTokenMismatch = 17002
    case invalidCredential = 17004
    case userDisabled = 17005
    case operationNotAllowed = 17006
    case emailAlreadyInUse = 17007
    case invalidEmail = 17008
    case wrongPassword = 17009
    case tooManyRequests = 17010
    case userNotFound = 17011
    case accountExistsWithDifferentCredential = 17012
    case requiresRecentLogin = 17014
    case providerAlreadyLinked = 17015
    case noSuchProvider = 17016
    case invalidUserToken = 17017
    case networkError = 17020
    case userTokenExpired = 17021
    case invalidAPIKey = 17023
    case userMismatch = 17024
    case credentialAlreadyInUse = 17025
    case weakPassword = 17026
    case appNotAuthorized = 17028
    case expiredActionCode = 17029
    case invalidActionCode = 17030
    case invalidMessagePayload = 17031
    case invalidSender = 17032
    case invalidRecipientEmail = 17033
    case missingEmail = 17034
    case missingIosBundleID = 17036
    case missingAndroidPackageName = 17037
    case unauthorizedDomain = 17038
    case invalidContinueURI = 17039
    case missingContinueURI = 17040
    case missingPhoneNumber = 17041
    case invalidPhoneNumber = 17042
    case missingVerificationCode = 17043
    case invalidVerificationCode = 17044
    case missingVerificationID = 17045
    case invalidVerificationID = 17046
    case missingAppCredential = 17047
    case invalidAppCredential = 17048
    case sessionExpired = 17051
    case quotaExceeded = 17052
    case missingAppToken = 17053
    case notificationNotForwarded = 17054
    case appNotVerified = 17055
    case captchaCheckFailed = 17056
    case webContextAlreadyPresented = 17057
    case webContextCancelled = 17058
    case appVerificationUserInteractionFailure = 17059
    case invalidClientID = 17060
    case webNetworkRequestFailed = 17061
    case webInternalError = 17062
    case webSignInUserInteractionFailure = 17063
    case localPlayerNotAuthenticated = 17066
    case nullUser = 17067
    case invalidProviderID = 17071
    case tenantIDMismatch = 17072
    case unsupportedTenantOperation = 17073
    case rejectedCredential = 17075
    case gameKitNotLinked = 17076
    case secondFactorRequired = 17078
    case missingMultiFactorSession = 17081
    case missingMultiFactorInfo = 17082
    case invalidMultiFactorSession = 17083
    case multiFactorInfoNotFound = 17084
    case adminRestrictedOperation = 17085
    case unverifiedEmail = 17086
    case secondFactorAlreadyEnrolled = 17087
    case maximumSecondFactorCountExceeded = 17088
    case unsupportedFirstFactor = 17089
    case emailChangeNeedsVerification = 17090
    case missingClientIdentifier = 17093
    case missingOrInvalidNonce = 17094
    case blockingCloudFunctionError = 17105
    case recaptchaNotEnabled = 17200
    case missingRecaptchaToken = 17201
    case invalidRecaptchaToken = 17202
    case invalidRecaptchaAction = 17203
    case missingClientType = 17204
    case missingRecaptchaVersion = 17205
    case invalidRecaptchaVersion = 17206
    case invalidReqType = 17207
    case recaptchaSDKNotLinked = 17208
    case recaptchaSiteKeyMissing = 17209
    case recaptchaActionCreationFailed = 17210
    case passwordDoesNotMeetRequirements = 17211
    case invalidHostingLinkDomain = 17214
    case keychainError = 17995
    case internalError = 17999
    case malformedJWT = 18000

    /// The code itself (FirebaseAuth has it for `error.code == .networkError` patterns).
    public var code: Self { self }
}

/// The constants FirebaseAuth keeps on `AuthErrors`.
open class AuthErrors: NSObject {
    public static let domain = "FIRAuthErrorDomain"
    public static let userInfoNameKey = "FIRAuthErrorUserInfoNameKey"
    public static let userInfoEmailKey = "FIRAuthErrorUserInfoEmailKey"
    public static let userInfoUpdatedCredentialKey = "FIRAuthErrorUserInfoUpdatedCredentialKey"
    public static let userInfoMultiFactorResolverKey = "FIRAuthErrorUserInfoMultiFactorResolverKey"
}
