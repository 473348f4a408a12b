import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where Firebase Auth's REST API is: Google's hosts, or a Hearth server (or Firebase's emulator), which
/// serves the same paths under its own origin (`http://localhost:9000/identitytoolkit.googleapis.com/v1/…`).
struct AuthEndpoint: Equatable, Sendable {
    /// `https://identitytoolkit.googleapis.com/v1`, or `<origin>/identitytoolkit.googleapis.com/v1`.
    var identityToolkit: String
    /// `https://securetoken.googleapis.com/v1`, or `<origin>/securetoken.googleapis.com/v1`.
    var secureToken: String
    var apiKey: String

    static func google(apiKey: String) -> AuthEndpoint {
        AuthEndpoint(
            identityToolkit: "https://identitytoolkit.googleapis.com/v1", secureToken: "https://securetoken.googleapis.com/v1",
            apiKey: apiKey)
    }

    /// A server at `origin` (`http://host:port`): Hearth, or the emulator.
    static func server(origin: String, apiKey: String) -> AuthEndpoint {
        AuthEndpoint(
            identityToolkit: origin + "/identitytoolkit.googleapis.com/v1", secureToken: origin + "/securetoken.googleapis.com/v1",
            apiKey: apiKey)
    }

    /// The endpoint for an app's options: Google's for a Firebase database URL (`*.firebaseio.com`,
    /// `*.firebasedatabase.app`) or none; the database's own origin for a Hearth server, which serves
    /// auth on the same port. `useEmulator(withHost:port:)` overrides either.
    static func forOptions(_ options: FirebaseOptions) -> AuthEndpoint {
        // Hearth takes any non-empty key; Google's needs the project's.
        let apiKey = options.apiKey.flatMap { $0.isEmpty ? nil : $0 } ?? "hearth"
        guard let url = options.databaseURL, let components = URLComponents(string: url), let host = components.host,
            !host.hasSuffix(".firebaseio.com"), !host.hasSuffix(".firebasedatabase.app")
        else { return .google(apiKey: apiKey) }
        let scheme = ["https", "wss"].contains(components.scheme?.lowercased() ?? "https") ? "https" : "http"
        return .server(origin: "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? ""), apiKey: apiKey)
    }
}

/// Tokens from a sign-in or a refresh.
struct TokenGrant: Equatable, Sendable {
    var idToken: String
    var refreshToken: String
    var expiresAt: Date
    var uid: String
}

/// The HTTP calls of Firebase Auth's REST API, and their errors as FirebaseAuth reports them.
struct AuthBackend: Sendable {
    var endpoint: AuthEndpoint
    var languageCode: String?

    /// Firebase's client version header, as the SDKs send it.
    private static let clientVersion = "Swift/Hearth/\(HearthClientVersion.string)/FirebaseCore-Swift"

    /// `POST …/accounts:<method>` with a JSON body; the JSON answer, or the server's error.
    func call(_ method: String, _ body: [String: Any]) async throws -> [String: Any] {
        guard let url = URL(string: "\(endpoint.identityToolkit)/accounts:\(method)?key=\(Self.escaped(endpoint.apiKey))") else {
            throw AuthFailure.error(.internalError, detail: "'\(endpoint.identityToolkit)' is not a URL.")
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        return try await send(request)
    }

    /// `POST …/token`: new tokens for a refresh token.
    func refresh(_ refreshToken: String) async throws -> TokenGrant {
        guard let url = URL(string: "\(endpoint.secureToken)/token?key=\(Self.escaped(endpoint.apiKey))") else {
            throw AuthFailure.error(.internalError, detail: "'\(endpoint.secureToken)' is not a URL.")
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("grant_type=refresh_token&refresh_token=\(Self.escaped(refreshToken))".utf8)
        let answer = try await send(request)
        guard let idToken = answer["id_token"] as? String, let refreshed = answer["refresh_token"] as? String,
            let uid = answer["user_id"] as? String
        else { throw AuthFailure.error(.internalError, detail: "The token service's answer lacks id_token, refresh_token or user_id.") }
        return TokenGrant(idToken: idToken, refreshToken: refreshed, expiresAt: Self.expiry(answer["expires_in"]), uid: uid)
    }

    /// The tokens of a sign-in answer (`idToken`, `refreshToken`, `expiresIn`, `localId`).
    static func grant(from answer: [String: Any]) throws -> TokenGrant {
        guard let idToken = answer["idToken"] as? String, let refreshToken = answer["refreshToken"] as? String,
            let uid = answer["localId"] as? String
        else { throw AuthFailure.error(.internalError, detail: "The sign-in answer lacks idToken, refreshToken or localId.") }
        return TokenGrant(idToken: idToken, refreshToken: refreshToken, expiresAt: expiry(answer["expiresIn"]), uid: uid)
    }

    /// `expiresIn` is a string of seconds ("3600"); a missing or odd one counts as an hour.
    static func expiry(_ value: Any?) -> Date {
        let seconds = (value as? String).flatMap(Double.init) ?? (value as? NSNumber)?.doubleValue ?? 3600
        return Date(timeIntervalSinceNow: min(max(seconds, 0), 86_400))
    }

    private func send(_ request: URLRequest) async throws -> [String: Any] {
        var request = request
        request.timeoutInterval = 30
        request.setValue(Self.clientVersion, forHTTPHeaderField: "X-Client-Version")
        if let languageCode { request.setValue(languageCode, forHTTPHeaderField: "X-Firebase-Locale") }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await Self.exchange(request)
        } catch {
            throw AuthFailure.error(.networkError, underlying: error)
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        guard (200..<300).contains(status) else {
            if let message = (json?["error"] as? [String: Any])?["message"] as? String {
                throw AuthFailure.server(message: message)
            }
            throw AuthFailure.error(.internalError, detail: "The auth server answered HTTP \(status) with no error message.")
        }
        guard let json else { throw AuthFailure.error(.internalError, detail: "The auth server's answer is not a JSON object.") }
        return json
    }

    /// The answer to `request`: URLSession's async `data(for:)` needs macOS 12 / watchOS 8, and the SDK
    /// supports macOS 10.15 and watchOS 7 (docs/swift-sdk.md), so the completion-handler task is awaited.
    private static func exchange(_ request: URLRequest) async throws -> (Data, URLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let data, let response {
                    continuation.resume(returning: (data, response))
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }.resume()
        }
    }

    private static func escaped(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
