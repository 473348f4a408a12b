import HearthOutbound
import HearthTriggers
import Testing

/// Where webhooks may post (docs/functions.md, "Where hooks may post"), and how long an event is retried.
struct HookDestinationTests {
    @Test(arguments: [
        ("127.0.0.1", OutboundAddresses.Kind.loopback), ("::1", .loopback), ("::ffff:127.0.0.1", .loopback),
        ("10.1.2.3", .nonPublic), ("172.16.0.1", .nonPublic), ("172.32.0.1", .global), ("192.168.1.1", .nonPublic),
        ("169.254.169.254", .nonPublic), ("100.64.0.1", .nonPublic), ("0.0.0.0", .nonPublic), ("224.0.0.1", .nonPublic),
        ("fd00::1", .nonPublic), ("fe80::1", .nonPublic), ("::ffff:10.0.0.1", .nonPublic), ("not an address", .nonPublic),
        ("8.8.8.8", .global), ("2606:4700::1111", .global),
    ])
    func addressesAreClassified(_ address: String, _ kind: OutboundAddresses.Kind) {
        #expect(OutboundAddresses.kind(of: address) == kind)
    }

    @Test func onlyPublicAddressesUnlessAllowed() {
        let strict = OutboundAddresses()
        #expect(strict.allows(address: "8.8.8.8", host: "example.com"))
        #expect(!strict.allows(address: "127.0.0.1", host: "localhost"))
        #expect(!strict.allows(address: "10.0.0.7", host: "evil.example.com"))
        let named = OutboundAddresses(allowedHosts: ["Functions.Internal"])
        #expect(named.allows(address: "10.0.0.7", host: "functions.internal"))
        #expect(!named.allows(address: "10.0.0.8", host: "other.internal"))
        #expect(OutboundAddresses(allowLoopback: true).allows(address: "::1", host: "localhost"))
        #expect(!OutboundAddresses(allowLoopback: true).allows(address: "192.168.0.1", host: "router"))
    }

    @Test func theDefaultAttemptsRetryForAtLeastAMinute() {
        let schedule = RetrySchedule()
        let waits = (1..<HooksDocument.Limits.attemptsDefault).map { schedule.delay(afterFailures: $0, random: 0) }
        #expect(waits.reduce(0, +) >= 60_000)
    }
}
