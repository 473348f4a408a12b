#if !canImport(Security)
    import Foundation
    import HearthSupport

    // The Security framework's calls that KeychainAuthUserStore makes, where there is no Security framework
    // (Linux): the same names and shapes, over an in-memory keychain of the process. So the Apple-only code
    // compiles in every build and its logic runs in the tests; the real framework's behaviour (access
    // control, iCloud, persistence) is Apple's and is not verified here (docs/swift-sdk.md).

    typealias OSStatus = Int32
    typealias CFTypeRef = Any
    typealias CFDictionary = [String: Any]
    typealias CFString = String

    let errSecSuccess: OSStatus = 0
    let errSecDuplicateItem: OSStatus = -25299
    let errSecItemNotFound: OSStatus = -25300
    let errSecParam: OSStatus = -50

    let kSecClass: CFString = "class"
    let kSecClassGenericPassword: CFString = "genp"
    let kSecAttrService: CFString = "svce"
    let kSecAttrAccount: CFString = "acct"
    let kSecAttrAccessible: CFString = "pdmn"
    let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
    let kSecReturnData: CFString = "r_Data"
    let kSecMatchLimit: CFString = "m_Limit"
    let kSecMatchLimitOne: CFString = "m_LimitOne"
    let kSecValueData: CFString = "v_Data"

    /// Generic passwords by service and account.
    private let standInItems = Locked<[String: Data]>([:])

    private func standInKey(_ query: CFDictionary) -> String? {
        guard query[kSecClass] as? String == kSecClassGenericPassword, let service = query[kSecAttrService] as? String,
            let account = query[kSecAttrAccount] as? String
        else { return nil }
        return service + "\u{0}" + account
    }

    func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        guard let key = standInKey(query) else { return errSecParam }
        guard let data = standInItems.withLock({ $0[key] }) else { return errSecItemNotFound }
        if query[kSecReturnData] as? Bool == true { result?.pointee = data }
        return errSecSuccess
    }

    func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        guard let key = standInKey(attributes), let data = attributes[kSecValueData] as? Data else { return errSecParam }
        return standInItems.withLock { items in
            guard items[key] == nil else { return errSecDuplicateItem }
            items[key] = data
            return errSecSuccess
        }
    }

    @discardableResult
    func SecItemDelete(_ query: CFDictionary) -> OSStatus {
        guard let key = standInKey(query) else { return errSecParam }
        return standInItems.withLock { $0.removeValue(forKey: key) } == nil ? errSecItemNotFound : errSecSuccess
    }
#endif
