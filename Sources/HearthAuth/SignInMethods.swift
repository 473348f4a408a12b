import Foundation
import HearthProtocol

/// Which ways of signing in a project allows (the console's Authentication page; Firebase's
/// `admin/v2/projects/{project}/config` `signIn`): email and password, passwordless email links, and
/// anonymous accounts. Admin calls are never refused by them. Kept in a small JSON file in the data
/// directory, written through a temporary file.
public struct SignInMethods: Equatable, Sendable {
    public var emailPassword = true
    public var emailLink = true
    public var anonymous = true

    public init(emailPassword: Bool = true, emailLink: Bool = true, anonymous: Bool = true) {
        self.emailPassword = emailPassword
        self.emailLink = emailLink
        self.anonymous = anonymous
    }

    /// Firebase's shape: `{"signIn": {"email": {"enabled", "passwordRequired"}, "anonymous": {"enabled"}}}`.
    /// Email links are allowed when email sign-in is on and a password is not required.
    var config: [String: Any] {
        [
            "signIn": [
                "email": ["enabled": emailPassword || emailLink, "passwordRequired": !emailLink],
                "anonymous": ["enabled": anonymous],
                "allowDuplicateEmails": false,
            ] as [String: Any],
            "name": "config",
        ]
    }

    /// Applies a PATCH body of the same shape; fields it does not name stay as they are.
    mutating func apply(_ body: [String: Any]) {
        guard let signIn = body["signIn"] as? [String: Any] else { return }
        if let email = signIn["email"] as? [String: Any] {
            let enabled = email["enabled"] as? Bool ?? (emailPassword || emailLink)
            let passwordRequired = email["passwordRequired"] as? Bool ?? !emailLink
            emailPassword = enabled
            emailLink = enabled && !passwordRequired
        }
        if let anonymous = (signIn["anonymous"] as? [String: Any])?["enabled"] as? Bool { self.anonymous = anonymous }
    }

    static func load(from file: String?, default fallback: SignInMethods) -> SignInMethods {
        guard let file, let data = FileManager.default.contents(atPath: file),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return fallback }
        return SignInMethods(
            emailPassword: object["emailPassword"] as? Bool ?? true, emailLink: object["emailLink"] as? Bool ?? true,
            anonymous: object["anonymous"] as? Bool ?? true)
    }

    func save(to file: String) throws {
        let object: [String: Any] = ["emailPassword": emailPassword, "emailLink": emailLink, "anonymous": anonymous]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let partial = file + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        guard FileManager.default.createFile(atPath: partial, contents: data, attributes: [.posixPermissions: 0o600]),
            rename(partial, file) == 0
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file]) }
    }
}

extension AuthService {
    /// `GET|PATCH /identitytoolkit.googleapis.com/admin/v2/projects/{project}/config`: admin only.
    func projectConfig(_ path: String, _ request: HTTPRequest, isAdmin: Bool) throws -> HTTPResponse {
        guard isAdmin else { throw AuthError.unauthenticated }
        let project = path.dropFirst("/identitytoolkit.googleapis.com/admin/v2/projects/".count).split(separator: "/").first
        guard path.hasSuffix("/config"), project.map(String.init) == configuration.projectID else {
            throw AuthError.invalid("CONFIGURATION_NOT_FOUND", "this Hearth serves project \(configuration.projectID)")
        }
        switch request.method {
        case .get:
            return .json(200, signInMethods.config)
        case .patch:
            let body = try RequestBody(bytes: request.body, form: false)
            let updated = try signInMethodsState.withLock { methods throws -> SignInMethods in
                var changed = methods
                changed.apply(body.fields)
                if let file = configuration.signInMethodsFile { try changed.save(to: file) }
                methods = changed
                return changed
            }
            return .json(200, updated.config)
        default:
            throw AuthError.notFound
        }
    }

    var signInMethods: SignInMethods { signInMethodsState.withLock { $0 } }
}
