import Foundation
import HearthProtocol

/// Which ways of signing in a project allows (the console's Authentication page; Firebase's
/// `admin/v2/projects/{project}/config` `signIn`): email and password, passwordless email links, and
/// anonymous accounts. Admin calls are never refused by them. Kept by a ``SignInMethodsStorage``: a small
/// JSON file in the data directory by default (``SignInMethodsFile``), a row in PostgreSQL for a cluster.
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

    /// How storages keep the methods: `{"anonymous":true,"emailLink":true,"emailPassword":false}`.
    public var storedJSON: String {
        JSONText.encode(["emailPassword": emailPassword, "emailLink": emailLink, "anonymous": anonymous], sorted: true)
    }

    /// The methods in ``storedJSON``'s form; nil when `text` is not a JSON object. A method it does not
    /// name is allowed (files from before it existed).
    public init?(storedJSON text: String) {
        guard let object = JSONText.object(Array(text.utf8)) else { return nil }
        self.init(
            emailPassword: object["emailPassword"] as? Bool ?? true, emailLink: object["emailLink"] as? Bool ?? true,
            anonymous: object["anonymous"] as? Bool ?? true)
    }
}

/// Where ``SignInMethods`` are kept between restarts and, for a cluster, shared by its nodes: an
/// ``AuthService`` reads them at start, re-reads them at most once a second (so a change made on another
/// node is seen within that), and saves an admin's change.
public protocol SignInMethodsStorage: Sendable {
    /// The saved methods; nil when none were ever saved (the service then uses its defaults).
    func load() throws -> SignInMethods?
    func save(_ methods: SignInMethods) throws
}

/// The methods in a JSON file (`<data>/auth-sign-in-methods.json`), written through a temporary file and
/// owner-only. A file that is missing or does not parse loads as nil (the defaults).
public struct SignInMethodsFile: SignInMethodsStorage {
    public let path: String

    public init(path: String) { self.path = path }

    public func load() throws -> SignInMethods? {
        FileManager.default.contents(atPath: path).flatMap { SignInMethods(storedJSON: String(decoding: $0, as: UTF8.self)) }
    }

    public func save(_ methods: SignInMethods) throws {
        let partial = path + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        guard FileManager.default.createFile(atPath: partial, contents: Data(methods.storedJSON.utf8), attributes: [.posixPermissions: 0o600]),
            rename(partial, path) == 0
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
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
            // Applied to what is stored now, which another node may have changed since it was last read.
            var changed = try signInMethodsStorage.flatMap { try $0.load() } ?? signInMethods
            changed.apply(body.fields)
            try signInMethodsStorage?.save(changed)
            signInMethodsState.withLock { $0 = (changed, .now) }
            return .json(200, changed.config)
        default:
            throw AuthError.notFound
        }
    }

    /// The methods in force: re-read from the storage at most once a second, by one caller while the others
    /// go on with what was last read (also when the storage cannot be read: the last known methods stay).
    var signInMethods: SignInMethods {
        let (methods, due) = signInMethodsState.withLock { state -> (SignInMethods, Bool) in
            guard signInMethodsStorage != nil, ContinuousClock.now - state.readAt >= Self.signInMethodsRereadInterval else {
                return (state.methods, false)
            }
            state.readAt = .now
            return (state.methods, true)
        }
        guard due, let storage = signInMethodsStorage, let stored = try? storage.load() else { return methods }
        signInMethodsState.withLock { $0.methods = stored }
        return stored
    }

    static let signInMethodsRereadInterval: Duration = .seconds(1)
}
