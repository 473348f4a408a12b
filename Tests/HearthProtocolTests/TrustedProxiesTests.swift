import HearthProtocol
import Testing

@Suite struct TrustedProxiesTests {
    private func request(from peer: String?, _ headers: [String: String]) -> HTTPRequest {
        HTTPRequest(method: .get, path: "/", headers: headers, remoteAddress: peer)
    }

    @Test func onlyAProxysForwardedHeadersAreBelieved() {
        let proxies = TrustedProxies(["127.0.0.1", "::1"])
        let forwarded = ["x-forwarded-for": "6.6.6.6, 203.0.113.9", "x-forwarded-proto": "https"]
        let viaProxy = request(from: "127.0.0.1", forwarded)
        #expect(proxies.clientAddress(of: viaProxy) == "203.0.113.9")
        #expect(proxies.cameOverTLS(viaProxy))
        // An IPv4 peer on a dual-stack socket is the same proxy.
        #expect(proxies.cameOverTLS(request(from: "::ffff:127.0.0.1", forwarded)))
        // Anyone else's say-so is their own word: ignored.
        let direct = request(from: "198.51.100.4", forwarded)
        #expect(proxies.clientAddress(of: direct) == "198.51.100.4")
        #expect(!proxies.cameOverTLS(direct))
        #expect(!TrustedProxies().cameOverTLS(viaProxy))
        #expect(TrustedProxies().clientAddress(of: viaProxy) == "127.0.0.1")
        // No header, or plain HTTP, from the proxy.
        #expect(proxies.clientAddress(of: request(from: "127.0.0.1", [:])) == "127.0.0.1")
        #expect(!proxies.cameOverTLS(request(from: "127.0.0.1", ["x-forwarded-proto": "http"])))
        #expect(proxies.cameOverTLS(request(from: "::1", ["x-forwarded-proto": " HTTPS , http"])))
    }

    @Test func addressesAreToldFromNames() {
        for address in ["127.0.0.1", "10.0.0.255", "::1", "fe80::1", "2001:db8::8:800:200c:417a", "::ffff:10.1.2.3"] {
            #expect(TrustedProxies.isAddress(address), "\(address)")
        }
        for name in ["proxy", "proxy.example.com", "256.1.1.1", "1.2.3", "", "1.2.3.4.5", "::g"] {
            #expect(!TrustedProxies.isAddress(name), "\(name)")
        }
    }
}
