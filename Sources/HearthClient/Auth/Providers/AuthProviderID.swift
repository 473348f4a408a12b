/// A sign-in provider's ID, as `AuthProviderID` in FirebaseAuth 11.1 and later (a struct there too).
public struct AuthProviderID: RawRepresentable, Equatable, Hashable, Sendable {
    public let rawValue: String

    public init?(rawValue: String) { self.rawValue = rawValue }
    private init(_ rawValue: String) { self.rawValue = rawValue }

    public static let apple = AuthProviderID("apple.com")
    public static let email = AuthProviderID("password")
    public static let facebook = AuthProviderID("facebook.com")
    public static let gameCenter = AuthProviderID("gc.apple.com")
    public static let gitHub = AuthProviderID("github.com")
    public static let google = AuthProviderID("google.com")
    public static let phone = AuthProviderID("phone")

    /// Any other provider: `.custom("oidc.partner")`.
    public static func custom(_ value: String) -> AuthProviderID { AuthProviderID(value) }
}
