/// The reverse proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (`hearth serve
/// --trusted-proxies`, docs/deploy.md): by the address a request came from, so that a client talking to
/// the server directly cannot choose its address or claim it came over HTTPS. Empty believes nobody.
///
///     let proxies = TrustedProxies(["127.0.0.1"])
///     proxies.clientAddress(of: request)   // the address nginx appended, or the peer's own
///     proxies.cameOverTLS(request)         // X-Forwarded-Proto: https, from the proxy only
public struct TrustedProxies: Sendable, Equatable {
    public let addresses: Set<String>

    public init(_ addresses: some Sequence<String> = []) { self.addresses = Set(addresses.map(Self.unmapped)) }

    /// An IPv4 address as an IPv6 socket reports it (`::ffff:127.0.0.1`) is the IPv4 address.
    private static func unmapped(_ address: String) -> String {
        address.lowercased().hasPrefix("::ffff:") && address.contains(".") ? String(address.dropFirst(7)) : address
    }

    public var isEmpty: Bool { addresses.isEmpty }

    /// Whether `text` is written as an IPv4 or IPv6 address (as transports report peers), not a name.
    public static func isAddress(_ text: String) -> Bool {
        if text.contains(":") {
            return text.count <= 45 && text.unicodeScalars.allSatisfy { $0 == ":" || $0 == "." || $0.properties.isASCIIHexDigit }
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in part.count <= 3 && UInt8(part) != nil }
    }

    /// Whether `request` came from one of the proxies (its transport peer address is one of theirs).
    public func vouchesFor(_ request: HTTPRequest) -> Bool {
        guard let peer = request.remoteAddress else { return false }
        return addresses.contains(Self.unmapped(peer))
    }

    /// The client's address: from a proxy, the last `X-Forwarded-For` entry (the one the proxy appended;
    /// earlier ones are whatever the client sent); otherwise the peer's.
    public func clientAddress(of request: HTTPRequest) -> String? {
        guard vouchesFor(request),
            let forwarded = request.headers["x-forwarded-for"]?.split(separator: ",").last.map(Self.trimmed),
            !forwarded.isEmpty
        else { return request.remoteAddress }
        return String(forwarded)
    }

    /// Whether a proxy says the client reached it over HTTPS (`X-Forwarded-Proto: https`).
    public func cameOverTLS(_ request: HTTPRequest) -> Bool {
        guard vouchesFor(request), let proto = request.headers["x-forwarded-proto"] else { return false }
        return proto.split(separator: ",").first.map(Self.trimmed)?.lowercased() == "https"
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return text.drop(while: isSpace).reversed().drop(while: isSpace).reversed().reduce(into: Substring()) { $0.append($1) }
    }
}
