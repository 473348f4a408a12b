import Foundation
import Testing
@testable import HearthClient

/// The Keychain store's own code, run on Linux against the in-memory stand-in of the Security calls it
/// makes (SecurityStandIn.swift): what it saves it loads, per app and key; sign-out forgets it; saving
/// again replaces (SecItemAdd refuses a duplicate, so the store deletes first).
@Suite struct KeychainStoreTests {
    static func user(_ uid: String, token: String) -> StoredUser {
        StoredUser(
            grant: TokenGrant(idToken: token, refreshToken: "refresh-\(uid)", expiresAt: Date(timeIntervalSince1970: 2_000_000_000), uid: uid),
            account: ["localId": uid, "email": "\(uid)@example.com", "emailVerified": true])
    }

    @Test func savesLoadsReplacesAndForgetsPerAppAndKey() {
        let store = KeychainAuthUserStore(appName: "keychain-test-\(UUID().uuidString)", apiKey: "key-1")
        let other = KeychainAuthUserStore(appName: store.service.replacingOccurrences(of: "hearth.auth.", with: ""), apiKey: "key-2")
        #expect(store.load() == nil)
        let ada = Self.user("ada", token: "t1")
        store.save(ada)
        #expect(store.load() == ada)
        #expect(other.load() == nil)
        let renewed = Self.user("ada", token: "t2")
        store.save(renewed)
        #expect(store.load() == renewed)
        store.save(nil)
        #expect(store.load() == nil)
    }
}
