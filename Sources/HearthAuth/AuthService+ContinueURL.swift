import Foundation

/// Where action links may send the browser afterwards (docs/auth.md §2.5 "action code settings").
extension AuthService {
    /// The hosts a `continueUrl` may name: the configured authorized domains and the host of `publicURL`.
    var authorizedHosts: Set<String> {
        var hosts = Set(configuration.authorizedDomains.map(Self.normalizedHost))
        if let publicURL = configuration.publicURL, let host = URLComponents(string: publicURL)?.host {
            hosts.insert(Self.normalizedHost(host))
        }
        return hosts
    }

    /// Refuses a `continueUrl`/`continueUri` that is not an absolute http(s) URL with a host
    /// (INVALID_CONTINUE_URI) or whose host is not authorized (UNAUTHORIZED_DOMAIN, Firebase's answer).
    func checkContinueURL(_ text: String) throws(AuthError) {
        let host = try Self.continueURLHost(text)
        guard authorizedHosts.contains(Self.normalizedHost(host)) else {
            throw AuthError.invalid("UNAUTHORIZED_DOMAIN", "Domain not allowlisted by project")
        }
    }

    /// The host of an http(s) URL; INVALID_CONTINUE_URI for anything else.
    static func continueURLHost(_ text: String) throws(AuthError) -> String {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { throw AuthError.invalid("INVALID_CONTINUE_URI") }
        return host
    }

    func isAuthorizedContinueURL(_ text: String) -> Bool {
        do { try checkContinueURL(text) } catch { return false }
        return true
    }

    /// Lower case, without IPv6 brackets or a DNS root dot, so `LOCALHOST.` and `localhost` match.
    static func normalizedHost(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        while host.hasSuffix(".") { host.removeLast() }
        return host
    }
}
