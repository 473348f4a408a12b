import Foundation
#if canImport(Security)
    import Security
#endif

/// The store on Apple platforms: a generic password item in the Keychain (as FirebaseAuth keeps its
/// user), one per app and API key, readable only after the device's first unlock. These are the SDK's
/// only Security calls; on Linux they compile against `SecurityStandIn.swift`, an in-memory keychain
/// with the same signatures, so every build compiles this file and the tests run it.
struct KeychainAuthUserStore: AuthUserStore {
    let service: String
    let account: String

    init(appName: String, apiKey: String) {
        service = "hearth.auth.\(appName)"
        account = apiKey
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    func load() -> StoredUser? {
        var item: CFTypeRef?
        var search = query
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        let status = SecItemCopyMatching(search as CFDictionary, &item)
        guard status == errSecSuccess, let data = item as? Data else {
            if status != errSecItemNotFound { ClientLog.warning("the saved sign-in could not be read from the Keychain (OSStatus \(status))") }
            return nil
        }
        return try? JSONDecoder().decode(StoredUser.self, from: data)
    }

    func save(_ user: StoredUser?) {
        SecItemDelete(query as CFDictionary)
        guard let user, let data = try? JSONEncoder().encode(user) else { return }
        var item = query
        item[kSecValueData as String] = data
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let status = SecItemAdd(item as CFDictionary, nil)
        if status != errSecSuccess { ClientLog.warning("the sign-in could not be saved to the Keychain (OSStatus \(status))") }
    }
}
