public import Foundation

/// Google Sign-In's tokens, as `GoogleAuthProvider` in FirebaseAuth.
open class GoogleAuthProvider: NSObject {
    public static let id = "google.com"

    public class func credential(withIDToken idToken: String, accessToken: String) -> AuthCredential {
        OAuthCredential(providerID: id, idToken: idToken, accessToken: accessToken)
    }
}

/// Facebook Login's access token, as `FacebookAuthProvider` in FirebaseAuth.
open class FacebookAuthProvider: NSObject {
    public static let id = "facebook.com"

    public class func credential(withAccessToken accessToken: String) -> AuthCredential {
        OAuthCredential(providerID: id, idToken: nil, accessToken: accessToken)
    }
}

/// A GitHub OAuth access token, as `GitHubAuthProvider` in FirebaseAuth.
open class GitHubAuthProvider: NSObject {
    public static let id = "github.com"

    public class func credential(withToken token: String) -> AuthCredential {
        OAuthCredential(providerID: id, idToken: nil, accessToken: token)
    }
}

/// Twitter's OAuth 1 token and secret, as `TwitterAuthProvider` in FirebaseAuth (Hearth's server does
/// not sign in with Twitter: it answers `operationNotAllowed`).
open class TwitterAuthProvider: NSObject {
    public static let id = "twitter.com"

    public class func credential(withToken token: String, secret: String) -> AuthCredential {
        OAuthCredential(providerID: id, idToken: nil, accessToken: token, secret: secret)
    }
}

/// Credentials of any provider by its ID (`apple.com`, `oidc.*`), as `OAuthProvider` in FirebaseAuth.
/// The web sign-in flow (`getCredentialWith`) needs a browser and is not provided: apps get the
/// provider's token with the provider's SDK and make a credential from it.
open class OAuthProvider: NSObject, @unchecked Sendable {  // set up, then used once
    public static let id = "OAuth"
    public let providerID: String
    public var scopes: [String]?
    public var customParameters: [String: String]?

    public init(providerID: String, auth: Auth = Auth.auth()) { self.providerID = providerID }
    public convenience init(providerID: AuthProviderID, auth: Auth = Auth.auth()) {
        self.init(providerID: providerID.rawValue, auth: auth)
    }

    public class func provider(providerID: String, auth: Auth = Auth.auth()) -> OAuthProvider {
        OAuthProvider(providerID: providerID, auth: auth)
    }

    public class func provider(providerID: AuthProviderID, auth: Auth = Auth.auth()) -> OAuthProvider {
        OAuthProvider(providerID: providerID, auth: auth)
    }

    public static func credential(providerID: AuthProviderID, idToken: String, accessToken: String? = nil) -> OAuthCredential {
        OAuthCredential(providerID: providerID.rawValue, idToken: idToken, accessToken: accessToken)
    }

    public static func credential(providerID: AuthProviderID, accessToken: String) -> OAuthCredential {
        OAuthCredential(providerID: providerID.rawValue, idToken: nil, accessToken: accessToken)
    }

    /// With the raw nonce whose SHA-256 the app put in its request to the provider.
    public static func credential(providerID: AuthProviderID, idToken: String, rawNonce: String, accessToken: String? = nil) -> OAuthCredential {
        OAuthCredential(providerID: providerID.rawValue, idToken: idToken, accessToken: accessToken, rawNonce: rawNonce)
    }

    /// Sign in with Apple: its ID token, the raw nonce, and the name Apple gave the app at the first
    /// sign-in (Apple sends it only then; the account keeps it as the display name).
    public static func appleCredential(withIDToken idToken: String, rawNonce: String?, fullName: PersonNameComponents?) -> OAuthCredential {
        OAuthCredential(providerID: AuthProviderID.apple.rawValue, idToken: idToken, accessToken: nil, rawNonce: rawNonce, fullName: fullName)
    }
}
