import Foundation

/// Which addresses a request may reach once its host name is resolved: what keeps webhooks (URLs an
/// admin typed, or anyone with the admin token) from reaching the server's own network. Checked on the
/// address libcurl connected to, before anything is sent, so a name that resolves differently the second
/// time cannot slip past a check made earlier.
public struct OutboundAddresses: Sendable, Equatable {
    /// 127.0.0.0/8 and ::1.
    public var allowLoopback: Bool
    /// RFC 1918, link-local, unique-local, CGNAT, unspecified and other non-public ranges.
    public var allowPrivate: Bool
    /// Hosts (as written in URLs, or addresses) allowed whatever they resolve to, and over plain http.
    public var allowedHosts: Set<String>

    public init(allowLoopback: Bool = false, allowPrivate: Bool = false, allowedHosts: Set<String> = []) {
        self.allowLoopback = allowLoopback
        self.allowPrivate = allowPrivate
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
    }

    /// Anything: for requests to places the server's own configuration names (provider keys).
    public static let any = OutboundAddresses(allowLoopback: true, allowPrivate: true)

    public enum Kind: Sendable, Equatable { case loopback, nonPublic, global }

    /// Whether a connection to `address` (numeric) for a URL naming `host` may go ahead.
    public func allows(address: String, host: String) -> Bool {
        if allowedHosts.contains(host.lowercased()) || allowedHosts.contains(address) { return true }
        switch Self.kind(of: address) {
        case .loopback: return allowLoopback
        case .nonPublic: return allowPrivate
        case .global: return true
        }
    }

    /// Why a request to `url` would be refused, when that shows in the URL itself (an address or a
    /// local name), as an admin configuring a webhook or a blocking hook should read it; names that
    /// resolve to a refused address are refused when connecting (``HTTPFetcher``).
    public func refusal(of url: String) -> String? {
        guard let host = URLComponents(string: url)?.host?.lowercased(), !host.isEmpty else { return "\(url) has no host" }
        let plainHTTP = url.lowercased().hasPrefix("http://")
        let literal = host == "localhost" ? "127.0.0.1" : host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let isNumeric = literal.allSatisfy { $0.isNumber || $0 == "." } || literal.contains(":")
        let isLiteral = literal == "127.0.0.1" || Self.kind(of: literal) != .nonPublic || isNumeric
        if isLiteral && !allows(address: literal, host: host) {
            return "\(host) is a private or loopback address; allow it with hearth serve --hooks-allow \(host) (or --emulator for loopback)"
        }
        if plainHTTP && !HTTPFetcher.allows(url, plainHTTPHosts: allowedHosts) {
            return "\(url) is plain http: use https, or allow the host with hearth serve --hooks-allow \(host)"
        }
        return nil
    }

    /// What kind of address a numeric IPv4 or IPv6 address is; anything unparsable counts as non-public.
    public static func kind(of address: String) -> Kind {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            let value = UInt32(bigEndian: v4.s_addr)
            let a = value >> 24, b = (value >> 16) & 0xFF
            if a == 127 { return .loopback }
            if a == 0 || a == 10 || (a == 172 && (16...31).contains(b)) || (a == 192 && b == 168) || (a == 169 && b == 254)
                || (a == 100 && (64...127).contains(b)) || a >= 224
            {
                return .nonPublic
            }
            return .global
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return .nonPublic }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return bytes[15] == 1 ? .loopback : .nonPublic }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return kind(of: "\(bytes[12]).\(bytes[13]).\(bytes[14]).\(bytes[15])")  // IPv4-mapped
        }
        if bytes[0] & 0xFE == 0xFC || (bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80) || bytes[0] == 0xFF { return .nonPublic }
        return .global
    }
}
