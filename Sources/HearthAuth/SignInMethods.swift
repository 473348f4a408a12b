import Foundation
import HearthProtocol

/// Which ways of signing in a project allows (the console's Authentication page; Firebase's
/// `admin/v2/projects/{project}/config` `signIn`): email and password, passwordless email links, and
/// anonymous accounts. Admin calls are never refused by them. Kept as the setting `sign_in_methods`
/// (``AuthSettingsStorage``): a small JSON file in the data directory by default, a row in PostgreSQL for
/// a cluster.
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
            return .json(200, projectConfigJSON(signInMethods, blockingHooks))
        case .patch:
            let body = try RequestBody(bytes: request.body, form: false)
            var hooks = blockingHooks
            if let blocking = body.fields["blockingFunctions"] {
                guard let fields = blocking as? [String: Any] else { throw AuthError.invalid("INVALID_CONFIG", "blockingFunctions must be an object") }
                let time = now
                let addresses = configuration.hookAddresses
                hooks = try blockingHooksSetting.update { hooks in
                    try hooks.apply(fields, now: time)
                    for event in BlockingHooks.Event.allCases {
                        guard let url = hooks[event]?.url, let refusal = addresses.refusal(of: url) else { continue }
                        throw AuthError.invalid("INVALID_CONFIG", "\(event.rawValue): \(refusal)")
                    }
                    return hooks
                }
            }
            let changed = try signInMethodsSetting.update { methods in
                methods.apply(body.fields)
                return methods
            }
            return .json(200, projectConfigJSON(changed, hooks))
        default:
            throw AuthError.notFound
        }
    }

    /// The config as Firebase answers it, with each blocking hook's status on this node beside it.
    private func projectConfigJSON(_ methods: SignInMethods, _ hooks: BlockingHooks) -> [String: Any] {
        var config = methods.config
        var blocking = hooks.config
        if var triggers = blocking["triggers"] as? [String: Any] {
            for event in BlockingHooks.Event.allCases {
                guard var trigger = triggers[event.rawValue] as? [String: Any] else { continue }
                trigger["status"] = blockingStatus.json(event)
                triggers[event.rawValue] = trigger
            }
            blocking["triggers"] = triggers
        }
        config["blockingFunctions"] = blocking
        return config
    }

    /// The methods in force (re-read from the storage at most once a second, ``SharedSetting``).
    var signInMethods: SignInMethods { signInMethodsSetting.value }
}
