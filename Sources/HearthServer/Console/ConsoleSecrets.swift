import Foundation
import HearthProtocol

/// Keeps identity providers' client secrets out of the browser: an auth answer the console forwards has
/// every `clientSecret` (and Apple's `privateKey`) replaced with `clientSecretSet: true`. Admins set
/// secrets through the console, which never reads them back; firebase-admin, calling the auth API
/// with the admin credential itself, still gets them.
enum ConsoleSecrets {
    static let hiddenFields: Set<String> = ["clientSecret", "privateKey"]

    /// Whether `path` answers with provider configurations (the only answers that carry secrets).
    static func mayCarrySecrets(_ path: String) -> Bool {
        path.contains("/oauthIdpConfigs") || path.contains("/defaultSupportedIdpConfigs") || path.contains("/inboundSamlConfigs")
    }

    static func hidden(_ response: HTTPResponse) -> HTTPResponse {
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.body)) else { return response }
        var answer = response
        guard let body = try? JSONSerialization.data(withJSONObject: strip(object)) else {
            // Never forward what could not be cleaned.
            return HTTPResponse(status: 500, headers: [("content-type", "application/json")], body: Array(#"{"error":{"code":500,"message":"INTERNAL"}}"#.utf8))
        }
        answer.body = Array(body)
        answer.headers = answer.headers.filter { $0.0.lowercased() != "content-length" }
        return answer
    }

    static func strip(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            var cleaned: [String: Any] = [:]
            for (key, item) in object {
                if hiddenFields.contains(key) {
                    if key == "clientSecret" { cleaned["clientSecretSet"] = true }
                    continue
                }
                cleaned[key] = strip(item)
            }
            return cleaned
        }
        if let array = value as? [Any] { return array.map(strip) }
        return value
    }
}
