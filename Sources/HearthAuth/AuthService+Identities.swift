import Foundation

/// Phone numbers and linked providers: attributes of an account that admins set and look accounts up by
/// (firebase-admin's `phone_number`, `provider_to_link`, `providers_to_delete`, `get_users`). Hearth
/// sends no SMS; linked providers are also what signInWithIdp finds accounts by.
extension AuthService {
    /// E.164: `+`, a country code that does not start with 0, at most 15 digits in all.
    static func checkedPhoneNumber(_ text: String) throws(AuthError) -> String {
        let digits = text.dropFirst()
        guard text.first == "+", (2...15).contains(digits.count), digits.first != "0", digits.allSatisfy({ $0.isASCII && $0.isNumber })
        else { throw AuthError.invalid("INVALID_PHONE_NUMBER", "Invalid format.") }
        return text
    }

    /// A `providerUserInfo` / `linkProviderUserInfo` entry: a federated provider's id and the user's id there.
    static func linkedProvider(_ fields: RequestBody) throws(AuthError) -> LinkedProvider {
        guard let providerId = fields.string("providerId"), !providerId.isEmpty else {
            throw AuthError.invalid("INVALID_PROVIDER_ID", "The providerId must be a non-empty string.")
        }
        guard !["password", "phone", "firebase", "anonymous"].contains(providerId) else {
            throw AuthError.invalid("INVALID_PROVIDER_ID", "\(providerId) cannot be linked as a federated provider.")
        }
        guard let rawId = fields.string("rawId") ?? fields.string("federatedId"), !rawId.isEmpty else {
            throw AuthError.invalid("INVALID_ARGUMENT", "The provider's rawId must be a non-empty string.")
        }
        var provider = LinkedProvider(providerId: providerId, rawId: rawId)
        provider.email = fields.string("email")
        provider.displayName = fields.string("displayName")
        provider.photoUrl = fields.string("photoUrl")
        provider.phoneNumber = fields.string("phoneNumber")
        return provider
    }

    /// Firebase's answer when a new or changed account would share what must be unique.
    static func conflictError(_ conflict: AccountStoreConflict) -> AuthError {
        switch conflict.field {
        case .email: AuthError.emailExists
        case .phoneNumber: AuthError.invalid("PHONE_NUMBER_EXISTS")
        case .provider: AuthError.invalid("FEDERATED_USER_ID_ALREADY_LINKED")
        case .id: AuthError.invalid("DUPLICATE_LOCAL_ID")
        }
    }

    /// The providers a lookup shows: `password` (a password, or sign-in by emailed link), `phone`, then
    /// each linked provider.
    func providerUserInfo(_ user: UserRecord) -> [[String: Any]] {
        var entries: [[String: Any]] = []
        if user.hasPasswordProvider, let email = user.email {
            var entry: [String: Any] = ["providerId": "password", "federatedId": email, "email": email, "rawId": email]
            if let name = user.displayName { entry["displayName"] = name }
            if let photo = user.photoUrl { entry["photoUrl"] = photo }
            entries.append(entry)
        }
        if let phone = user.phoneNumber {
            entries.append(["providerId": "phone", "rawId": phone, "phoneNumber": phone])
        }
        for provider in user.linkedProviders ?? [] {
            var entry: [String: Any] = ["providerId": provider.providerId, "rawId": provider.rawId, "federatedId": provider.rawId]
            if let email = provider.email { entry["email"] = email }
            if let name = provider.displayName { entry["displayName"] = name }
            if let photo = provider.photoUrl { entry["photoUrl"] = photo }
            if let phone = provider.phoneNumber { entry["phoneNumber"] = phone }
            if let screenName = provider.screenName { entry["screenName"] = screenName }
            entries.append(entry)
        }
        return entries
    }

    /// The accounts an admin lookup names: by `localId`, `email`, `phoneNumber` and
    /// `federatedUserId` ({providerId, rawId}), each once, in the order asked.
    func adminLookup(_ body: RequestBody) throws -> [UserRecord] {
        var users: [UserRecord] = []
        for uid in body.strings("localId") { if let user = try store.user(id: uid) { users.append(user) } }
        for email in body.strings("email") {
            if let canonical = Self.canonicalEmail(email), let user = try store.user(email: canonical) { users.append(user) }
        }
        for phone in body.strings("phoneNumber") { if let user = try store.user(phoneNumber: phone) { users.append(user) } }
        for identity in body.objects("federatedUserId") {
            guard let providerId = identity.string("providerId"), let rawId = identity.string("rawId") else { continue }
            if let user = try store.user(providerId: providerId, rawId: rawId) { users.append(user) }
        }
        var seen: Set<String> = []
        return users.filter { seen.insert($0.localId).inserted }
    }
}
