import HearthProtocol

/// The `X-Forwarded-For` and `X-Forwarded-Proto` headers as ``TrustedProxies`` reads them, from a peer
/// that is a trusted proxy and from one that is not. Properties: from anyone else the headers change
/// nothing (the client address is the peer's, never HTTPS); from the proxy, the client address is the
/// header's last entry without its spaces (or the proxy's own when there is none); nothing crashes.
///
/// Input: `X-Forwarded-For`, a newline, `X-Forwarded-Proto`.
enum ForwardedFuzzing {
    static let target = FuzzTarget(name: "forwarded", input: "X-Forwarded-For, newline, X-Forwarded-Proto", run: run)

    static let proxies = TrustedProxies(["10.0.0.1", "::1"])

    static func run(_ bytes: [UInt8]) {
        let (forHeader, protoHeader) = bytes.splitOnce(at: UInt8(ascii: "\n"))
        let headers = ["x-forwarded-for": String(decoding: forHeader, as: UTF8.self), "x-forwarded-proto": String(decoding: protoHeader, as: UTF8.self)]
        let stranger = HTTPRequest(method: .get, path: "/", headers: headers, remoteAddress: "203.0.113.7")
        fuzzCheck(proxies.clientAddress(of: stranger) == "203.0.113.7", "a stranger's X-Forwarded-For was believed")
        fuzzCheck(!proxies.cameOverTLS(stranger), "a stranger's X-Forwarded-Proto was believed")
        let proxied = HTTPRequest(method: .get, path: "/", headers: headers, remoteAddress: "10.0.0.1")
        let client = proxies.clientAddress(of: proxied) ?? ""
        fuzzCheck(!client.isEmpty && !client.contains(",") && client.first != " " && client.last != " ",
                  "the client address \(client.debugDescription) is not one entry")
        _ = proxies.cameOverTLS(proxied)
        for text in [String(decoding: forHeader, as: UTF8.self), String(decoding: protoHeader, as: UTF8.self)] {
            _ = TrustedProxies.isAddress(text)
        }
    }
}
