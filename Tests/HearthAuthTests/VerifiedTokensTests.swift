import HearthCore
import Testing

@testable import HearthAuth

/// The token verifier's cache: a client that refreshes its token often must not fill it (the soak's
/// sign-ins grew a node's heap by a third of a megabyte a minute, every refreshed token kept until 10,000).
@Suite struct VerifiedTokensTests {
    func context(_ uid: String) -> AuthContext {
        AuthContext(uid: uid, provider: "password", issuedAt: 0, expiresAt: 3_600, authTime: nil, claims: Node(["sub": Node(uid)]))
    }

    @Test func eachAccountKeepsItsNewestTokens() {
        var tokens = VerifiedTokens(capacity: 100, perAccountMax: 2)
        for n in 1...5 { tokens.insert(context("ada"), for: "ada-\(n)") }
        tokens.insert(context("bob"), for: "bob-1")
        #expect(tokens.count == 3)
        #expect(tokens["ada-3"] == nil && tokens["ada-4"]?.uid == "ada" && tokens["ada-5"]?.uid == "ada")
        #expect(tokens["bob-1"]?.uid == "bob")
        // The same token again is one entry, not a newer one.
        tokens.insert(context("bob"), for: "bob-1")
        tokens.insert(context("bob"), for: "bob-1")
        tokens.insert(context("bob"), for: "bob-2")
        #expect(tokens["bob-1"] != nil && tokens["bob-2"] != nil)
    }

    @Test func pastItsCapacityItStartsOver() {
        var tokens = VerifiedTokens(capacity: 3)
        for n in 1...3 { tokens.insert(context("u\(n)"), for: "t\(n)") }
        #expect(tokens.count == 3)
        tokens.insert(context("u4"), for: "t4")
        #expect(tokens.count == 1 && tokens["t1"] == nil && tokens["t4"] != nil)
        // Nothing is kept without a capacity.
        var none = VerifiedTokens(capacity: 0)
        none.insert(context("u"), for: "t")
        #expect(none.count == 0)
    }
}
