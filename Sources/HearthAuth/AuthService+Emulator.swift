import HearthProtocol
import Foundation

extension AuthService {
    /// `/emulator/…` (docs/auth.md §1.5, §6.3): the outbox of out-of-band codes, clearing accounts, the
    /// project config and the action handler. Open in emulator mode; admin-only otherwise, except the action
    /// handler, which is what email links point at.
    func emulatorRoute(_ path: String, _ request: HTTPRequest) throws -> HTTPResponse {
        if path == "/emulator/action" { return try action(request) }
        if Self.providerWidgetPaths.contains(path) { return try providerWidget(path, request) }
        let parts = path.split(separator: "/")  // emulator, v1, projects, {id}, resource
        guard parts.count == 5, parts[1] == "v1", parts[2] == "projects" else { throw AuthError.notFound }
        guard parts[3] == configuration.projectID else {
            throw AuthError.invalid("CONFIGURATION_NOT_FOUND", "this Hearth serves project \(configuration.projectID)")
        }
        if !configuration.emulator {
            guard try adminCredential(request) else { throw AuthError.unauthenticated }
        }
        switch (request.method.rawValue, parts[4]) {
        case ("GET", "oobCodes"):
            let codes = try store.oobCodes().filter { $0.expiresAt > now }.map { code -> [String: Any] in
                // Codes that were emailed are stored only as hashes: listed without code or link.
                var entry: [String: Any] = ["email": code.email, "requestType": code.requestType]
                if code.outboxShowsCode {
                    entry["oobCode"] = code.code
                    entry["oobLink"] = link(for: code, request: request, apiKey: nil)
                }
                if let newEmail = code.newEmail { entry["newEmail"] = newEmail }
                return entry
            }
            return .json(200, ["oobCodes": codes])
        case ("DELETE", "accounts"):
            try store.deleteAllUsers()
            return .json(200, [String: Any]())
        case ("GET", "config"):
            return .json(200, emulatorConfig)
        case ("PATCH", "config"):
            let body = try RequestBody(bytes: request.body, form: false)
            if let privacy = body.fields["emailPrivacyConfig"] as? [String: Any],
                let enabled = RequestBody(fields: privacy).bool("enableImprovedEmailPrivacy")
            {
                enumerationProtection.withLock { $0 = enabled }
            }
            return .json(200, emulatorConfig)
        default:
            throw AuthError.notFound
        }
    }

    /// An email sign-in link sends the browser back to the app (`continueUrl`) with the link's parameters,
    /// where the SDK calls `signInWithEmailLink` (docs/auth.md §6.3). The code is not used here, but it must be
    /// a live EMAIL_SIGNIN code and the target on an authorized domain: otherwise anyone could bounce visitors
    /// (and codes) to a host of their choosing. The `continueUrl` stored with the code wins over the link's, so
    /// an edited link cannot be pointed elsewhere. Nil when the link is not one to follow.
    func signInRedirect(_ request: HTTPRequest) -> HTTPResponse? {
        guard let code = request.query("oobCode"), let oob = try? liveCode(code), oob.requestType == "EMAIL_SIGNIN",
            let continueUrl = oob.continueUrl ?? request.query("continueUrl"), isAuthorizedContinueURL(continueUrl),
            var components = URLComponents(string: continueUrl)
        else { return nil }
        var items = components.queryItems ?? []
        for name in ["mode", "oobCode", "apiKey", "lang"] {
            if let value = request.query(name) { items.append(URLQueryItem(name: name, value: value)) }
        }
        components.queryItems = items
        return HTTPResponse(status: 303, headers: [("location", components.string ?? continueUrl)], body: [])
    }

    private var emulatorConfig: [String: Any] {
        [
            "signIn": ["allowDuplicateEmails": false],
            "emailPrivacyConfig": ["enableImprovedEmailPrivacy": protectsEmails],
        ]
    }

    /// `GET /emulator/action?mode=…&oobCode=…` (docs/auth.md §6.3): what an emailed link does when opened.
    /// JSON, as the emulator answers; opening a link never consumes a code except by completing its action.
    private func action(_ request: HTTPRequest) throws -> HTTPResponse {
        if request.method == .post { return try actionForm(request) }
        guard request.method == .get else { throw AuthError.notFound }
        if request.headers["accept"]?.contains("text/html") == true { return actionPage(request) }
        guard let code = request.query("oobCode"), request.query("apiKey") != nil else {
            return .json(400, ["authEmulator": ["error": "missing apiKey or oobCode query parameter"]])
        }
        let continueUrl = request.query("continueUrl")
        func done(_ fields: [String: Any]) -> HTTPResponse {
            if let continueUrl, isAuthorizedContinueURL(continueUrl) {
                return HTTPResponse(status: 303, headers: [("location", continueUrl)], body: [])
            }
            return .json(200, ["authEmulator": fields])
        }
        do {
            switch request.query("mode") {
            case "signIn":
                return signInRedirect(request) ?? .json(400, ["authEmulator": [
                    "error": "INVALID_OOB_CODE: the sign-in link is expired or used, or its continueUrl is missing or not on an authorized domain.",
                ]])
            case "verifyEmail":
                let result = try applyOobCode(code)
                return done(["success": "The email has been successfully verified.", "email": result["email"] ?? ""])
            case "verifyAndChangeEmail":
                let result = try applyOobCode(code)
                return done(["success": "The email has been successfully changed.", "newEmail": result["newEmail"] ?? ""])
            case "resetPassword":
                guard let newPassword = request.query("newPassword"), newPassword != "NEW_PASSWORD_HERE" else {
                    return .json(400, ["authEmulator": [
                        "error": "missing newPassword query parameter",
                        "instructions": "add &newPassword=NEW_PASSWORD_HERE to the link to set a new password",
                    ]])
                }
                let result = try resetPassword(AuthCall(
                    body: RequestBody(fields: ["oobCode": code, "newPassword": newPassword]), isAdmin: false,
                    projectPath: false, request: request, apiKey: nil))
                return done(["success": "The password has been successfully updated.", "email": result["email"] ?? ""])
            default:
                return .json(400, ["authEmulator": ["error": "Invalid mode"]])
            }
        } catch let error as AuthError {
            return .json(400, ["authEmulator": [
                "error": "\(error.code): the action code is invalid. This can happen if the code is malformed, expired, or has already been used.",
            ]])
        }
    }
}
