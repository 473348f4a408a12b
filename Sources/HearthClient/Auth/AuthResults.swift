public import Foundation

/// What a sign-in returns, as `AuthDataResult` in FirebaseAuth.
open class AuthDataResult: NSObject, @unchecked Sendable {  // immutable
    public let user: User
    public let additionalUserInfo: AdditionalUserInfo?
    /// The identity provider's credential, for a sign-in with one (to call the provider's APIs).
    public let credential: OAuthCredential?

    init(user: User, providerID: String, isNewUser: Bool) {
        self.user = user
        additionalUserInfo = AdditionalUserInfo(providerID: providerID, isNewUser: isNewUser)
        credential = nil
    }

    /// From an `accounts:signInWithIdp` answer: the provider's profile and credential with the user.
    init(user: User, identityProviderAnswer answer: [String: Any]) {
        self.user = user
        additionalUserInfo = AdditionalUserInfo(answer: answer)
        credential = OAuthCredential.fromAnswer(answer)
    }
}

open class AdditionalUserInfo: NSObject, @unchecked Sendable {  // immutable
    public let providerID: String
    /// What the provider said of the user (its ID token's claims, or its user API's answer).
    public let profile: [String: Any]?
    /// The user's handle at the provider (GitHub's login).
    public let username: String?
    public let isNewUser: Bool
    public func newUser() -> Bool { isNewUser }

    init(providerID: String, isNewUser: Bool) {
        self.providerID = providerID
        self.isNewUser = isNewUser
        profile = nil
        username = nil
    }

    init(answer: [String: Any]) {
        providerID = answer["providerId"] as? String ?? ""
        isNewUser = answer["isNewUser"] as? Bool ?? false
        let raw = (answer["rawUserInfo"] as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Any]
        profile = raw
        username = (answer["screenName"] as? String) ?? (providerID == "github.com" ? raw?["login"] as? String : nil)
    }
}

/// A credential to sign in, reauthenticate or link with.
open class AuthCredential: NSObject, @unchecked Sendable {  // immutable
    enum Kind: Sendable {
        case password(email: String, password: String)
        /// An emailed sign-in link (`EmailAuthProvider.credential(withEmail:link:)`).
        case emailLink(email: String, link: String)
        /// An identity provider's tokens: the credential is an ``OAuthCredential``.
        case identityProvider
    }

    public let provider: String
    let kind: Kind

    init(provider: String, kind: Kind) {
        self.provider = provider
        self.kind = kind
    }
}

/// Email and password credentials, as `EmailAuthProvider` in FirebaseAuth.
open class EmailAuthProvider: NSObject {
    public static let id = "password"

    /// The sign-in method an account that signs in with emailed links lists (`fetchSignInMethods`).
    public static let emailLinkSignInMethod = "emailLink"
    public static let emailPasswordSignInMethod = "password"

    public class func credential(withEmail email: String, password: String) -> AuthCredential {
        AuthCredential(provider: id, kind: .password(email: email, password: password))
    }

    /// A credential from an emailed sign-in link (``Auth/sendSignInLink(toEmail:actionCodeSettings:)``),
    /// to sign in with, or to link to the signed-in account.
    public class func credential(withEmail email: String, link: String) -> AuthCredential {
        AuthCredential(provider: id, kind: .emailLink(email: email, link: link))
    }
}

/// Where an emailed link leads after the action (`continueUrl`), as `ActionCodeSettings` in FirebaseAuth.
open class ActionCodeSettings: NSObject, @unchecked Sendable {  // set up, then passed once
    public var url: URL?
    public var handleCodeInApp = false
    public var iOSBundleID: String?
    public var androidPackageName: String?
    public var androidMinimumVersion: String?
    public var androidInstallIfNotAvailable = false
    public var linkDomain: String?

    public override init() {}

    public func setIOSBundleID(_ bundleID: String) { iOSBundleID = bundleID }

    public func setAndroidPackageName(_ androidPackageName: String, installIfNotAvailable: Bool, minimumVersion: String?) {
        self.androidPackageName = androidPackageName
        androidInstallIfNotAvailable = installIfNotAvailable
        androidMinimumVersion = minimumVersion
    }

    func add(to body: inout [String: Any]) {
        if let url { body["continueUrl"] = url.absoluteString }
        if handleCodeInApp { body["canHandleCodeInApp"] = true }
        if let iOSBundleID { body["iOSBundleId"] = iOSBundleID }
        if let androidPackageName {
            body["androidPackageName"] = androidPackageName
            body["androidInstallApp"] = androidInstallIfNotAvailable
            if let androidMinimumVersion { body["androidMinimumVersion"] = androidMinimumVersion }
        }
        if let linkDomain { body["linkDomain"] = linkDomain }
    }
}

/// An ID token and its claims, as `AuthTokenResult` in FirebaseAuth.
open class AuthTokenResult: NSObject, @unchecked Sendable {  // immutable
    public let token: String
    public let expirationDate: Date
    public let authDate: Date
    public let issuedAtDate: Date
    public let signInProvider: String
    public let signInSecondFactor: String
    public let claims: [String: Any]

    /// Reads the token's payload (it was checked by the server that issued it; the client does not verify it).
    init?(token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Self.base64URL(parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
        else { return nil }
        func date(_ name: String) -> Date { Date(timeIntervalSince1970: (claims[name] as? NSNumber)?.doubleValue ?? 0) }
        let firebase = claims["firebase"] as? [String: Any]
        self.token = token
        self.claims = claims
        expirationDate = date("exp")
        authDate = date("auth_time")
        issuedAtDate = date("iat")
        signInProvider = firebase?["sign_in_provider"] as? String ?? ""
        signInSecondFactor = firebase?["sign_in_second_factor"] as? String ?? ""
    }

    private static func base64URL(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
