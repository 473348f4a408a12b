public import HearthProtocol
import Foundation
import HearthSupport

/// One parsed call: who made it and with what.
struct AuthCall {
    var body: RequestBody
    /// The caller presented an admin credential.
    var isAdmin: Bool
    /// The path named the project (`/v1/projects/{id}/…`): a privileged call.
    var projectPath: Bool
    var request: HTTPRequest
    var apiKey: String?

    /// Admin form of an endpoint: a project path, or an admin credential on the plain path.
    var privileged: Bool { projectPath || isAdmin }
}

extension AuthService {
    /// The path prefixes this service answers (HearthServer routes them here).
    public static let pathPrefixes = [
        "/identitytoolkit.googleapis.com/", "/securetoken.googleapis.com/",
        "/www.googleapis.com/identitytoolkit/v3/relyingparty/", "/www.googleapis.com/service_accounts/v1/jwk/",
        "/emulator/", "/hearth/v1/auth/",
    ]

    public static func handles(path: String) -> Bool { pathPrefixes.contains { path.hasPrefix($0) } }

    /// The legacy v3 names the iOS (and Android) SDKs use (docs/auth.md §1.2).
    static let legacyNames: [String: String] = [
        "signupNewUser": "signUp", "verifyPassword": "signInWithPassword", "getAccountInfo": "lookup",
        "setAccountInfo": "update", "getOobConfirmationCode": "sendOobCode", "resetPassword": "resetPassword",
        "deleteAccount": "delete", "verifyCustomToken": "signInWithCustomToken", "createAuthUri": "createAuthUri",
        "emailLinkSignin": "signInWithEmailLink", "uploadAccount": "batchCreate", "downloadAccount": "batchGet",
        "verifyAssertion": "signInWithIdp",
    ]

    /// Admin APIs of Firebase Auth that Hearth does not have, by the path they use.
    static func unsupportedFeature(_ path: String) -> String? {
        let features = [
            ("/tenants", "tenants (multi-tenancy)"),
            ("/accounts/mfaEnrollment", "multi-factor enrollments"), ("/accounts/mfaSignIn", "multi-factor sign-ins"),
        ]
        guard path.hasPrefix("/identitytoolkit.googleapis.com/v2/") else { return nil }
        return features.first { path.contains($0.0) }?.1
    }

    /// Headers browsers may send to the auth endpoints (docs/auth.md §1.4.9), allowed in preflights when the
    /// request does not list its own.
    static let allowedHeaders =
        "content-type, x-client-version, x-firebase-gmpid, x-firebase-client, x-firebase-appcheck, x-firebase-locale, x-goog-api-key, authorization"

    /// Answers one request. Thread-safe; may block for an argon2id computation.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        var request = request
        // Behind a trusted proxy the peer is the proxy itself: the address it appended is the client's.
        request.remoteAddress = configuration.trustedProxies.clientAddress(of: request)
        var response: HTTPResponse
        if request.method == .options {
            return HTTPResponse(status: 204, headers: [
                ("access-control-allow-origin", request.headers["origin"] ?? "*"), ("vary", "Origin"),
                ("access-control-allow-methods", "GET, POST, PATCH, DELETE, OPTIONS"),
                ("access-control-allow-headers", request.headers["access-control-request-headers"] ?? Self.allowedHeaders),
                ("access-control-allow-private-network", "true"), ("access-control-max-age", "86400"),
            ], body: [])
        }
        do {
            response = try route(request)
        } catch let error as AuthError {
            response = HTTPResponse.json(error.httpStatus, error.json)
        } catch {
            response = HTTPResponse.json(500, AuthError.internalError.json)
        }
        response.headers.append(("access-control-allow-origin", request.headers["origin"] ?? "*"))
        response.headers.append(("vary", "Origin"))
        response.headers.append(("cache-control", "no-store"))
        return response
    }

    private func route(_ request: HTTPRequest) throws -> HTTPResponse {
        let path = request.path.replacingOccurrences(of: "%3A", with: ":").replacingOccurrences(of: "%3a", with: ":")
        if path.hasPrefix("/emulator/") { return try emulatorRoute(path, request) }
        if path == "/hearth/v1/auth/events" { return try authEventsRoute(request) }
        if path.hasPrefix("/hearth/v1/auth/") { throw AuthError.notFound }
        if path.hasPrefix("/www.googleapis.com/service_accounts/v1/jwk/") {
            guard request.method == .get else { throw AuthError.notFound }
            return HTTPResponse(
                status: 200, headers: [("content-type", "application/json; charset=utf-8"), ("cache-control", "public, max-age=3600")],
                body: Array(key.jwksJSON.utf8))
        }

        let isAdmin = try adminCredential(request)
        if let answered = try providerConfigRoute(path, request, isAdmin: isAdmin) { return answered }
        if path.hasPrefix("/identitytoolkit.googleapis.com/admin/v2/projects/") {
            return try projectConfig(path, request, isAdmin: isAdmin)
        }
        var operation: String
        var projectPath = false
        if path == "/securetoken.googleapis.com/v1/token" {
            operation = "token"
        } else if path.hasPrefix("/www.googleapis.com/identitytoolkit/v3/relyingparty/") {
            let name = String(path.dropFirst("/www.googleapis.com/identitytoolkit/v3/relyingparty/".count))
            guard let mapped = Self.legacyNames[name] else { throw AuthError.notFound }
            operation = mapped
        } else if path == "/identitytoolkit.googleapis.com/v2/passwordPolicy" {
            operation = "passwordPolicy"
        } else if let feature = Self.unsupportedFeature(path) {
            // Said plainly, in Firebase's shape, rather than a bare 404 (docs/auth.md, Not supported).
            throw AuthError.invalid("OPERATION_NOT_ALLOWED", "\(feature) are not supported by Hearth")
        } else if path.hasPrefix("/identitytoolkit.googleapis.com/v1/accounts:") {
            operation = String(path.dropFirst("/identitytoolkit.googleapis.com/v1/accounts:".count))
        } else if path.hasPrefix("/identitytoolkit.googleapis.com/v1/projects/") {
            let rest = path.dropFirst("/identitytoolkit.googleapis.com/v1/projects/".count)
            var parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 1, parts[0].hasSuffix(":createSessionCookie") { parts.append("") }
            guard parts.count == 2 else { throw AuthError.notFound }
            if parts[0].hasSuffix(":createSessionCookie") {
                operation = "createSessionCookie"
            } else if parts[1] == "accounts" {
                operation = "signUp"
            } else if parts[1].hasPrefix("accounts:") {
                operation = String(parts[1].dropFirst("accounts:".count))
            } else if parts[0].hasSuffix(":queryAccounts") {
                operation = "query"
            } else {
                throw AuthError.notFound
            }
            let project = parts[0].split(separator: ":").first.map(String.init) ?? ""
            guard isAdmin else { throw AuthError.unauthenticated }
            guard project == configuration.projectID else {
                throw AuthError.invalid("CONFIGURATION_NOT_FOUND", "this Hearth serves project \(configuration.projectID)")
            }
            projectPath = true
        } else {
            throw AuthError.notFound
        }

        let apiKey = request.query("key") ?? request.headers["x-goog-api-key"]
        if !isAdmin && (apiKey ?? "").isEmpty && operation != "passwordPolicy" { throw AuthError.missingAPIKey }
        let isForm = request.headers["content-type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
        var body = try RequestBody(bytes: request.body, form: isForm)
        if operation == "batchGet" {
            // GET with the page in the query (v1), or the v3 downloadAccount POST with it in the body.
            for item in request.queryItems { body.fields[RequestBody.camelCase(item.name)] = item.value }
        }
        if !isAdmin, body.has("targetProjectId") {
            throw AuthError.invalid("INSUFFICIENT_PERMISSION", "Only authenticated requests can specify target_project_id.")
        }
        let call = AuthCall(body: body, isAdmin: isAdmin, projectPath: projectPath, request: request, apiKey: apiKey)

        let result: [String: Any]
        switch (request.method.rawValue, operation) {
        case ("POST", "signUp"): result = try signUp(call)
        case ("POST", "signInWithPassword"): result = try signInWithPassword(call)
        case ("POST", "lookup"): result = try lookup(call)
        case ("POST", "update"): result = try update(call)
        case ("POST", "delete"): result = try deleteAccount(call)
        case ("POST", "sendOobCode"): result = try sendOobCode(call)
        case ("POST", "resetPassword"): result = try resetPassword(call)
        case ("POST", "signInWithCustomToken"): result = try signInWithCustomToken(call)
        case ("POST", "createAuthUri"): result = try createAuthUri(call)
        case ("POST", "signInWithEmailLink"): result = try signInWithEmailLink(call)
        case ("POST", "signInWithIdp"): result = try signInWithIdp(call)
        case ("POST", "token"): result = try refresh(call)
        case ("GET", "batchGet"), ("POST", "batchGet"): result = try batchGet(call)
        case ("POST", "batchCreate"): result = try batchCreate(call)
        case ("POST", "batchDelete"): result = try batchDelete(call)
        case ("POST", "query"): result = try queryAccounts(call)
        case ("POST", "createSessionCookie"): result = try createSessionCookie(call)
        case ("GET", "passwordPolicy"): result = passwordPolicy
        case ("POST", "revokeToken"):
            // Revoking a provider's token (Sign in with Apple's, when an app deletes an account) means
            // calling the provider with a client secret Hearth does not make (docs/auth.md, Not supported).
            throw AuthError.invalid("OPERATION_NOT_ALLOWED", "revoking \(call.body.string("providerId") ?? "a provider")'s tokens is not supported by Hearth")
        default:
            throw operation.isEmpty ? AuthError.notFound : AuthError.notImplemented("\(request.method.rawValue) accounts:\(operation)")
        }
        return HTTPResponse.json(200, result)
    }

    /// Whether `Authorization: Bearer …` is an admin credential: `owner` in emulator mode, the admin
    /// token otherwise. Any other bearer value is refused (401), as Firebase's emulator does.
    func adminCredential(_ request: HTTPRequest) throws(AuthError) -> Bool {
        guard let header = request.headers["authorization"] else { return false }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        let credential = String(parts[1]).trimmingCharacters(in: .whitespaces)
        if configuration.emulator && credential.lowercased() == "owner" { return true }
        if let adminToken = configuration.adminToken,
            ConstantTime.equal(adminToken, credential)
        {
            return true
        }
        throw AuthError.unauthenticated
    }

    var passwordPolicy: [String: Any] {
        [
            "customStrengthOptions": ["minPasswordLength": 6, "maxPasswordLength": 4096],
            "allowedNonAlphanumericCharacters": [String](), "enforcementState": "OFF", "forceUpgradeOnSignin": false,
            "schemaVersion": 1,
        ]
    }
}
